import Testing
import SearchlightHistory
import SearchlightTestSupport

/// Retry delays: bounded, jittered, sub-second bounds honoured, reset by a success.
@Suite struct BackoffTests {
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    @Test func everyDelayStaysWithinMinimumAndTheDoublingCeiling() {
        var random = SplitMix(seed: 26)
        var backoff = Backoff(minimum: .milliseconds(50), maximum: .seconds(5))
        for failure in 1...40 {
            let ceiling = backoff.nextCeiling
            let delay = backoff.next(using: &random)
            #expect(delay >= .milliseconds(50) && delay <= ceiling, "failure \(failure): \(delay) not in 50 ms…\(ceiling)")
            #expect(ceiling == min(.seconds(5), .milliseconds(50) * (1 << min(failure, 20))))
            #expect(delay <= .seconds(5))
        }
        #expect(backoff.failures == 40)
    }

    @Test func theSameSeedDrawsTheSameDelaysAndTheyAreJittered() {
        func draw(_ seed: UInt64) -> [Duration] {
            var random = SplitMix(seed: seed)
            var backoff = Backoff(minimum: .milliseconds(10), maximum: .seconds(1))
            return (0..<12).map { _ in backoff.next(using: &random) }
        }
        #expect(draw(7) == draw(7))
        #expect(draw(7) != draw(8))
        // Jitter: once the ceiling is at the maximum, delays still differ.
        #expect(Set(draw(7).suffix(5)).count > 1)
    }

    @Test func aSubSecondMaximumStaysSubSecondAndIsNeverZero() {
        var random = SplitMix(seed: 3)
        var backoff = Backoff(minimum: .microseconds(200), maximum: .milliseconds(300))
        var largest = Duration.zero
        var delays: [Duration] = []
        for _ in 0..<200 {
            let delay = backoff.next(using: &random)
            delays.append(delay)
            #expect(delay > .zero)
            #expect(delay >= .microseconds(200))
            #expect(delay <= .milliseconds(300))
            largest = max(largest, delay)
        }
        // Not truncated to whole seconds (0) nor rounded up to one: the draws reach well into the range.
        #expect(largest > .milliseconds(150))
        // Drawn in nanoseconds, not whole milliseconds.
        #expect(delays.contains { Self.nanoseconds($0) % 1_000_000 != 0 })
    }

    @Test func aZeroMaximumIsZeroAndAZeroMinimumDrawsUpToTheMaximum() {
        var random = SplitMix(seed: 1)
        var zero = Backoff(minimum: .zero, maximum: .zero)
        #expect((0..<10).allSatisfy { _ in zero.next(using: &random) == .zero })
        var fromZero = Backoff(minimum: .zero, maximum: .milliseconds(20))
        let delays = (0..<50).map { _ in fromZero.next(using: &random) }
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .milliseconds(20) })
        #expect(Set(delays).count > 1)
    }

    @Test func resetStartsAgainFromTheSmallestDelays() {
        var random = SplitMix(seed: 5)
        var backoff = Backoff(minimum: .milliseconds(100), maximum: .seconds(60))
        for _ in 0..<10 { _ = backoff.next(using: &random) }
        #expect(backoff.nextCeiling == .seconds(60))
        backoff.reset()
        #expect(backoff.failures == 0)
        #expect(backoff.nextCeiling == .milliseconds(200))
        let delay = backoff.next(using: &random)
        #expect(delay >= .milliseconds(100) && delay <= .milliseconds(200))
    }

    @Test func hugeBoundsDoNotOverflow() {
        var random = SplitMix(seed: 9)
        var backoff = Backoff(minimum: .seconds(1), maximum: .seconds(Int64.max / 2))
        for _ in 0..<100 { #expect(backoff.next(using: &random) >= .seconds(1)) }
    }
}
