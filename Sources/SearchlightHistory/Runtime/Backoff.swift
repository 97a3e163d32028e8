/// Bounded, jittered exponential backoff between retries of a failing step.
///
/// After the *n*-th failure in a row, ``next(using:)`` draws a delay uniformly at random
/// between ``minimum`` and `min(maximum, minimum · 2ⁿ)` ("full jitter" above a floor), in
/// nanoseconds: sub-second bounds are honoured as they are, never rounded to whole seconds.
/// So every delay lies within `minimum…maximum`, and it is zero only if `maximum` is zero
/// (or `minimum` is zero and the draw says so). ``reset()`` after a success starts again from
/// the smallest delays.
///
/// ```swift
/// var backoff = Backoff(minimum: .milliseconds(50), maximum: .milliseconds(800))
/// while true {
///     do {
///         try step()
///         backoff.reset()
///     } catch {
///         try await Task.sleep(for: backoff.next())  // 50…100 ms, then 50…200 ms, … at most 800 ms
///     }
/// }
/// ```
///
/// Tests pass a seeded generator to ``next(using:)`` to replay the same delays.
public struct Backoff: Hashable, Sendable {
    /// The smallest delay, and the unit the ceiling doubles from.
    public let minimum: Duration
    /// The largest delay.
    public let maximum: Duration
    /// Failures since the last ``reset()`` (the number of delays drawn).
    public private(set) var failures = 0

    /// Creates a backoff. `minimum` must not be negative nor exceed `maximum`.
    ///
    /// With a zero `minimum`, the ceiling does not grow: each delay is drawn from `0…maximum`.
    public init(minimum: Duration = .milliseconds(50), maximum: Duration = .seconds(5)) {
        precondition(minimum >= .zero, "a backoff's minimum must not be negative")
        precondition(minimum <= maximum, "a backoff's minimum must not exceed its maximum")
        self.minimum = minimum
        self.maximum = maximum
    }

    /// The ceiling of the next delay: `min(maximum, minimum · 2^(failures + 1))`.
    public var nextCeiling: Duration {
        let low = Self.nanoseconds(minimum), high = Self.nanoseconds(maximum)
        guard low > 0 else { return maximum }
        let shift = min(failures + 1, 62)
        let ceiling = low > (high >> UInt64(shift)) ? high : min(high, low << UInt64(shift))
        return .nanoseconds(Int64(ceiling))
    }

    /// Counts a failure and returns how long to wait before retrying, drawn with `generator`.
    public mutating func next<G: RandomNumberGenerator>(using generator: inout G) -> Duration {
        let low = Self.nanoseconds(minimum), high = Self.nanoseconds(nextCeiling)
        failures += 1
        return .nanoseconds(Int64(UInt64.random(in: low...max(low, high), using: &generator)))
    }

    /// Counts a failure and returns how long to wait before retrying (system randomness).
    public mutating func next() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return next(using: &generator)
    }

    /// Forgets the failures: the next delay is one of the smallest again. Call it after a success.
    public mutating func reset() {
        failures = 0
    }

    /// The wait after `failures` failures in a row, for a caller that keeps its own count (a
    /// sink's step, a fleet's member): `minimum` doubled with each failure after the first, at
    /// most `maximum` (sub-second maxima included), never under `floor`, drawn in the upper half
    /// of that ceiling, so that callers that failed together do not retry in step.
    public static func delay(failures: Int, minimum: Duration, maximum: Duration, floor: Duration = .zero,
                             using generator: inout some RandomNumberGenerator) -> Duration {
        let exponential = minimum * (1 << min(max(failures - 1, 0), 30))
        let ceiling = max(min(exponential, maximum), floor)
        let jittered = ceiling / 2 + (ceiling / 2) * Double.random(in: 0...1, using: &generator)
        return min(max(jittered, ceiling / 2, floor), ceiling)
    }

    /// `duration` in whole nanoseconds, clamped to `0…Int64.max` (about 292 years).
    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow || whole > UInt64(Int64.max) { return UInt64(Int64.max) }
        return min(UInt64(Int64.max), whole + UInt64(attoseconds / 1_000_000_000))
    }
}
