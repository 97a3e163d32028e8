import Testing
@testable import SearchlightHistory

/// Regression: the watcher re-checked only five times, 2 ms apart, after a file event, and
/// any file written in the same directory reset its fallback poll: a commit that became visible
/// late was not seen until its writer closed.
@Suite struct WatchScheduleTests {
    @Test func eventsAboutOtherFilesNeverPostponeTheFallbackCheck() {
        var schedule = WatchSchedule(fallback: 250, now: 0)
        // Other files are written every 50 ms: the loop wakes up, but only the clock decides.
        for time in stride(from: 50, to: 250, by: 50) {
            #expect(!schedule.isDue(now: Int64(time)))
            #expect(schedule.timeout(now: Int64(time)) == Int32(250 - time))
        }
        #expect(schedule.isDue(now: 250))
        schedule.checked(now: 250, moved: false)
        #expect(!schedule.isDue(now: 300) && schedule.isDue(now: 500))
    }

    @Test func aRelevantEventIsRecheckedForAQuarterSecondUntilACommitShows() {
        var schedule = WatchSchedule(fallback: 10_000, now: 0)
        schedule.relevantEvent(now: 1_000)
        var checks: [Int64] = []
        var time: Int64 = 1_000
        while time < 1_400 {
            if schedule.isDue(now: time) {
                checks.append(time - 1_000)
                schedule.checked(now: time, moved: false)
            }
            time += 1
        }
        #expect(checks == [1, 3, 7, 15, 31, 63, 127, 255], "re-checks over about 255 ms, not 10")
        schedule.relevantEvent(now: 2_000)
        schedule.checked(now: 2_001, moved: true)
        #expect(schedule.rechecks.isEmpty, "a commit seen ends the series")
        #expect(schedule.timeout(now: 2_001) == 10_000)
    }
}
