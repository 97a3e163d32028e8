import Dispatch
import Foundation
import GRDB
import Synchronization
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Notices commits made by other processes, without spinning while idle.
///
/// On Linux it sleeps in `poll(2)` on an inotify descriptor that watches the database's
/// directory for writes to the database and its `-wal` file. Each wake-up reads the head token
/// and publishes it if it moved (and wakes subscribers if the schema changed: a migration of the
/// host app, which the next consumer batch checks); when it reads is ``WatchSchedule``'s: re-checks after an event
/// (a WAL write is reported just before its commit becomes visible), and a slow poll (every
/// 250 ms by default) that other files' events never push back. Without inotify it polls every 20 ms.
final class ExternalChangeWatcher: Sendable {
    private let stopped = AtomicFlag()

    /// - Parameters:
    ///   - publish: called with the head token when it moved.
    ///   - wake: called when the schema changed with no new history (a remade table must be
    ///     checked at once: until then its writes go unrecorded), and once when reading the head
    ///     starts failing (a dropped or damaged log), so that subscribers wake up and read.
    init(dbPool: DatabasePool, logger: Logger, fallbackInterval: Duration, fileIdentity: FileIdentity?,
         publish: @escaping @Sendable (HistoryToken) -> Void, wake: @escaping @Sendable () -> Void) {
        let path = dbPool.path
        let stopped = self.stopped
        let milliseconds = Int32(max(1, min(Double(Int32.max), fallbackInterval.seconds * 1000)))
        let thread = Thread {
            Self.run(path: path, dbPool: dbPool, logger: logger, fallbackMilliseconds: milliseconds, stopped: stopped,
                     fileIdentity: fileIdentity, publish: publish, wake: wake)
        }
        thread.name = "searchlight.watcher"
        thread.start()
    }

    func stop() { stopped.set() }

    private static func run(path: String, dbPool: DatabasePool, logger: Logger, fallbackMilliseconds: Int32, stopped: AtomicFlag,
                            fileIdentity: FileIdentity?, publish: @Sendable (HistoryToken) -> Void, wake: @Sendable () -> Void) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let names: Set<String> = [url.lastPathComponent, url.lastPathComponent + "-wal"]
        var descriptor: Int32 = -1
        #if os(Linux)
        // IN_NONBLOCK | IN_CLOEXEC
        descriptor = inotify_init1(0o4000 | 0o2000000)
        // IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO
        if descriptor >= 0, inotify_add_watch(descriptor, directory, 0x2 | 0x8 | 0x100 | 0x80) < 0 {
            close(descriptor)
            descriptor = -1
        }
        #endif
        if descriptor < 0 { logger.debug("no inotify for \(directory): polling for changes from other processes") }
        defer { if descriptor >= 0 { close(descriptor) } }

        var last = HistoryToken.zero
        var lastSchemaVersion: Int64?
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        func now() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }
        var schedule = WatchSchedule(fallback: Int64(fallbackMilliseconds), now: now())
        var failing = false
        var replaced = false
        while !stopped.isSet {
            var relevant = false
            if descriptor >= 0 {
                var pfd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&pfd, 1, schedule.timeout(now: now())) > 0, drain(descriptor, &buffer, names: names) {
                    relevant = true
                    schedule.relevantEvent(now: now())
                }
            } else {
                usleep(20_000)
                relevant = true
            }
            guard !stopped.isSet, relevant || schedule.isDue(now: now()) else { continue }
            var moved = false
            // The file was moved over or deleted: subscribers read once more and meet the error
            // (``HistoryStore/checkFileIdentity()``).
            if !replaced, let fileIdentity, FileIdentity(path: path) != fileIdentity {
                replaced = true
                wake()
                schedule.checked(now: now(), moved: false)
                continue
            }
            do {
                let (head, schemaVersion) = try dbPool.read { db in
                    (try HistoryLog.headToken(db), try Int64.fetchOne(db, sql: "PRAGMA schema_version"))
                }
                failing = false
                if head > last {
                    last = head
                    moved = true
                    publish(head)
                } else if let lastSchemaVersion, schemaVersion != lastSchemaVersion {
                    moved = true
                    wake()
                }
                lastSchemaVersion = schemaVersion
            } catch {
                if !failing {
                    logger.debug("cannot read the history head: \(error)")
                    failing = true
                    wake()
                }
            }
            schedule.checked(now: now(), moved: moved)
        }
    }

    /// Reads all pending events; true if one concerns the database or its WAL.
    private static func drain(_ descriptor: Int32, _ buffer: inout [UInt8], names: Set<String>) -> Bool {
        var relevant = false
        #if os(Linux)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset + 16 <= count {
                // struct inotify_event { int wd; uint32_t mask, cookie, len; char name[]; }
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                if length > 0 {
                    let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                    if names.contains(String(decoding: nameBytes, as: UTF8.self)) { relevant = true }
                }
                offset += 16 + length
            }
        }
        #endif
        return relevant
    }
}
