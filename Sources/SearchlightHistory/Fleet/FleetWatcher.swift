import Dispatch
import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Watches the folder of a ``DatabaseGlob`` for a whole fleet, on one thread and one inotify
/// descriptor: databases that appear or go, and writes to each member or its WAL.
///
/// Events are coalesced per read of the descriptor. Without inotify (another system, or the
/// kernel's limit on watches reached) it rescans the folder and reports every member as changed
/// every `fallback`; with it, the folder is rescanned at that interval too, in case the kernel
/// dropped events (its queue overflowed).
final class FleetWatcher: Sendable {
    enum Event: Sendable, Equatable {
        /// The members now, when they differ from the last report.
        case members(Set<String>)
        /// Writes to a member's database or WAL file.
        case changed(String)
        /// The fallback interval passed (with inotify): the fleet looks again at members whose
        /// last look could not say for sure that it saw everything.
        case tick
    }

    /// What the watcher's thread and ``drain()`` share: a read of the descriptor and the report
    /// of what it held happen under this lock, so that a caller of ``drain()`` knows that every
    /// event queued before its call was reported when it returns.
    private struct Reader: ~Copyable {
        var descriptor: Int32 = -1
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var members: Set<String>? = nil
        var unreadable = false
        /// The folder as the last periodic rescan found it settled (see ``FolderStamp``).
        var settled: FolderStamp? = nil
    }

    /// A folder's identity and modification time: creating, deleting or renaming an entry
    /// changes it. A periodic rescan of a folder whose stamp has not changed since a rescan
    /// would find the same members: it is skipped (a rescan of 10,000 files costs tens of
    /// milliseconds, every interval, for nothing). A stamp is trusted only once it is a second
    /// old: an entry made in the same clock tick as a rescan, after it, would leave it equal.
    struct FolderStamp: Equatable {
        var device: UInt64, inode: UInt64, seconds: Int, nanoseconds: Int

        init?(_ path: String) {
            #if os(Linux)
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            seconds = info.st_mtim.tv_sec
            nanoseconds = info.st_mtim.tv_nsec
            #else
            return nil // every periodic rescan runs
            #endif
        }

        /// Whether the modification is at least a second older than the clock.
        var isSettled: Bool {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return now.tv_sec - seconds >= 2 || (now.tv_sec - seconds == 1 && now.tv_nsec >= nanoseconds)
        }
    }

    private let stopped = AtomicFlag()
    private let reader = Mutex(Reader())
    private let glob: DatabaseGlob
    private let logger: Logger
    private let fallbackMilliseconds: Int32
    private let report: @Sendable ([Event]) -> Void

    init(glob: DatabaseGlob, fallback: Duration, logger: Logger, useInotify: Bool = true, report: @escaping @Sendable ([Event]) -> Void) {
        self.glob = glob
        self.logger = logger
        self.report = report
        fallbackMilliseconds = Int32(max(1, min(Double(Int32.max), fallback.seconds * 1000)))
        #if os(Linux)
        if useInotify {
            // IN_NONBLOCK | IN_CLOEXEC
            var descriptor = inotify_init1(0o4000 | 0o2000000)
            // IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF.
            // Every commit writes its database or WAL (IN_MODIFY); IN_CLOSE_WRITE is left out: a
            // connection that merely closes (a check's, a released member's) would set off
            // another check, forever (100% of a core).
            if descriptor >= 0, inotify_add_watch(descriptor, glob.directory, 0x2 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800) < 0 {
                logger.warning("cannot watch the folder \(glob.directory) (\(String(cString: strerror(errno)))): polling it every \(fallbackMilliseconds) ms")
                close(descriptor)
                descriptor = -1
            }
            reader.withLock { $0.descriptor = descriptor }
        }
        #endif
        let thread = Thread { [self] in run() }
        thread.name = "searchlight.fleet.watcher"
        thread.start()
    }

    func stop() { stopped.set() }

    /// Reports, before it returns, every event the kernel queued so far (nothing without
    /// inotify). The kernel queues a write's event before the write returns: a turn that calls
    /// this after its last write has had its own writes reported.
    func drain() {
        guard !stopped.isSet else { return }
        reader.withLock { reader in
            guard reader.descriptor >= 0 else { return }
            let events = pendingEvents(&reader)
            if !events.isEmpty { report(events) }
        }
    }

    private func rescan(_ reader: inout Reader) -> [Event] {
        do throws(SearchlightError) {
            let now = Set(try glob.matchingPaths())
            if reader.unreadable { logger.notice("the folder \(glob.directory) can be read again") }
            reader.unreadable = false
            guard now != reader.members else { return [] }
            reader.members = now
            return [.members(now)]
        } catch {
            if !reader.unreadable { logger.error("\(error.message); retrying every \(fallbackMilliseconds) ms") }
            reader.unreadable = true
            guard reader.members != [] else { return [] }
            reader.members = []
            return [.members([])]
        }
    }

    /// The fallback's rescan, with inotify: skipped while the folder's stamp is the one a
    /// rescan found settled (inotify reports every change of membership; this rescan is for
    /// events the kernel dropped, and a dropped event still changed the folder's stamp).
    private func periodicRescan(_ reader: inout Reader) -> [Event] {
        let before = FolderStamp(glob.directory)
        if let before, before == reader.settled { return [] }
        let events = rescan(&reader)
        reader.settled = before.flatMap { $0.isSettled && !reader.unreadable ? $0 : nil }
        return events
    }

    /// The events pending on the descriptor (a rescan first if membership may have changed).
    private func pendingEvents(_ reader: inout Reader) -> [Event] {
        var events: [Event] = []
        let (changed, membership) = Self.drain(reader.descriptor, &reader.buffer, glob: glob)
        if membership { events += rescan(&reader) }
        let known = reader.members ?? []
        events += changed.sorted().filter { known.contains($0) }.map(Event.changed)
        return events
    }

    private func run() {
        defer {
            reader.withLock { reader in
                if reader.descriptor >= 0 { close(reader.descriptor) }
                reader.descriptor = -1
            }
        }
        reader.withLock { reader in
            let events = rescan(&reader)
            report(events)
        }
        let descriptor = reader.withLock { $0.descriptor }
        func now() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }
        var lastScan = now()
        while !stopped.isSet {
            if descriptor >= 0 {
                var pfd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let wait = Int32(clamping: max(0, lastScan + Int64(fallbackMilliseconds) - now()))
                let ready = poll(&pfd, 1, min(wait, 1_000)) > 0
                let rescanning = now() - lastScan >= Int64(fallbackMilliseconds)
                guard ready || rescanning else { continue }
                reader.withLock { reader in
                    var events = ready ? pendingEvents(&reader) : []
                    if rescanning { events += periodicRescan(&reader) + [.tick] }
                    if !events.isEmpty, !stopped.isSet { report(events) }
                }
                if rescanning { lastScan = now() }
            } else {
                // No inotify: a rescan and every member changed, every interval (in slices, so
                // that a stop is seen within a second).
                let wait = max(0, lastScan + Int64(fallbackMilliseconds) - now())
                if wait > 0 { usleep(useconds_t(min(wait, 1_000) * 1_000)); continue }
                reader.withLock { reader in
                    var events = rescan(&reader)
                    events += (reader.members ?? []).sorted().map(Event.changed)
                    if !events.isEmpty, !stopped.isSet { report(events) }
                }
                lastScan = now()
            }
        }
    }

    /// Reads all pending events: the members (or their WALs) written to, and whether the
    /// folder's membership may have changed (a file created, deleted or moved; an overflow).
    private static func drain(_ descriptor: Int32, _ buffer: inout [UInt8], glob: DatabaseGlob) -> (changed: Set<String>, membership: Bool) {
        var changed: Set<String> = []
        var membership = false
        #if os(Linux)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset + 16 <= count {
                // struct inotify_event { int wd; uint32_t mask, cookie, len; char name[]; }
                let mask = buffer.withUnsafeBytes { $0.load(fromByteOffset: offset + 4, as: UInt32.self) }
                let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
                if mask & 0x4000 != 0 || mask & 0xC00 != 0 { membership = true } // IN_Q_OVERFLOW, the folder itself deleted or moved
                if length > 0 {
                    let bytes = buffer[(offset + 16)..<min(offset + 16 + length, count)].prefix { $0 != 0 }
                    let name = String(decoding: bytes, as: UTF8.self)
                    let database = name.hasSuffix("-wal") ? String(name.dropLast(4)) : name
                    if glob.matches(fileName: database) {
                        if mask & (0x40 | 0x80 | 0x100 | 0x200) != 0, database == name { membership = true }
                        if mask & (0x2 | 0x80) != 0 { changed.insert((glob.directory as NSString).appendingPathComponent(database)) }
                    }
                }
                offset += 16 + length
            }
        }
        #endif
        return (changed, membership)
    }
}
