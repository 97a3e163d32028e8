import Dispatch
import Foundation
import Logging
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
    }

    private let stopped = AtomicFlag()

    init(glob: DatabaseGlob, fallback: Duration, logger: Logger, useInotify: Bool = true, report: @escaping @Sendable ([Event]) -> Void) {
        let stopped = self.stopped
        let milliseconds = Int32(max(1, min(Double(Int32.max), fallback.seconds * 1000)))
        let thread = Thread {
            Self.run(glob: glob, fallbackMilliseconds: milliseconds, logger: logger, useInotify: useInotify, stopped: stopped, report: report)
        }
        thread.name = "searchlight.fleet.watcher"
        thread.start()
    }

    func stop() { stopped.set() }

    private static func run(glob: DatabaseGlob, fallbackMilliseconds: Int32, logger: Logger, useInotify: Bool, stopped: AtomicFlag,
                            report: @Sendable ([Event]) -> Void) {
        var descriptor: Int32 = -1
        #if os(Linux)
        if useInotify {
            // IN_NONBLOCK | IN_CLOEXEC
            descriptor = inotify_init1(0o4000 | 0o2000000)
            // IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF.
            // Every commit writes its database or WAL (IN_MODIFY); IN_CLOSE_WRITE is left out: a
            // connection that merely closes (a check's, a released member's) would set off
            // another check, forever (100% of a core).
            if descriptor >= 0, inotify_add_watch(descriptor, glob.directory, 0x2 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800) < 0 {
                logger.warning("cannot watch the folder \(glob.directory) (\(String(cString: strerror(errno)))): polling it every \(fallbackMilliseconds) ms")
                close(descriptor)
                descriptor = -1
            }
        }
        #endif
        defer { if descriptor >= 0 { close(descriptor) } }

        var members: Set<String>? = nil
        var unreadable = false
        func rescan() -> [Event] {
            do throws(SearchlightError) {
                let now = Set(try glob.matchingPaths())
                if unreadable { logger.notice("the folder \(glob.directory) can be read again") }
                unreadable = false
                guard now != members else { return [] }
                members = now
                return [.members(now)]
            } catch {
                if !unreadable { logger.error("\(error.message); retrying every \(fallbackMilliseconds) ms") }
                unreadable = true
                guard members != [] else { return [] }
                members = []
                return [.members([])]
            }
        }
        report(rescan())
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        func now() -> Int64 { Int64(DispatchTime.now().uptimeNanoseconds / 1_000_000) }
        var lastScan = now()
        while !stopped.isSet {
            var events: [Event] = []
            if descriptor >= 0 {
                var pfd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let wait = Int32(clamping: max(0, lastScan + Int64(fallbackMilliseconds) - now()))
                if poll(&pfd, 1, min(wait, 1_000)) > 0 {
                    let (changed, membership) = drain(descriptor, &buffer, glob: glob)
                    if membership { events += rescan(); lastScan = now() }
                    let known = members ?? []
                    events += changed.sorted().filter { known.contains($0) }.map(Event.changed)
                }
                if now() - lastScan >= Int64(fallbackMilliseconds) {
                    events += rescan()
                    lastScan = now()
                }
            } else {
                // No inotify: a rescan and every member changed, every interval (in slices, so
                // that a stop is seen within a second).
                let wait = max(0, lastScan + Int64(fallbackMilliseconds) - now())
                if wait > 0 { usleep(useconds_t(min(wait, 1_000) * 1_000)); continue }
                events += rescan()
                events += (members ?? []).sorted().map(Event.changed)
                lastScan = now()
            }
            if !events.isEmpty, !stopped.isSet { report(events) }
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
