/// When the change watcher next reads the head token, in milliseconds of a monotonic clock.
///
/// - A relevant file event (the database or its WAL) is checked at once, then again after 1, 2,
///   4 … 128 ms (about a quarter of a second in all): SQLite publishes a commit a moment after
///   its WAL frames are written, later under a slow fsync or `synchronous=FULL`. A check that
///   finds a new commit ends the series.
/// - Whatever happens in the directory, the head is read at least every `fallback` ms: events
///   about other files never push that deadline back (they used to reset it, so a commit that
///   became visible late could wait until its writer closed).
struct WatchSchedule {
    static let recheckDelays: [Int64] = [1, 2, 4, 8, 16, 32, 64, 128]

    let fallback: Int64
    private(set) var lastCheck: Int64
    /// Times of the re-checks still to come after the last relevant event.
    private(set) var rechecks: [Int64] = []

    init(fallback: Int64, now: Int64) {
        self.fallback = max(fallback, 1)
        lastCheck = now
    }

    /// A file event about the database or its WAL: check now, then re-check.
    mutating func relevantEvent(now: Int64) {
        var time = now
        rechecks = Self.recheckDelays.map { delay in time += delay; return time }
    }

    /// Whether the head should be read now.
    func isDue(now: Int64) -> Bool {
        now - lastCheck >= fallback || (rechecks.first.map { $0 <= now } ?? false)
    }

    /// How long to sleep in `poll(2)` before the next check is due.
    func timeout(now: Int64) -> Int32 {
        var next = lastCheck + fallback
        if let recheck = rechecks.first { next = min(next, recheck) }
        return Int32(clamping: max(0, next - now))
    }

    /// The head was read; `moved` if it found a new commit.
    mutating func checked(now: Int64, moved: Bool) {
        lastCheck = now
        rechecks = moved ? [] : rechecks.filter { $0 > now }
    }
}
