import Foundation

/// The generator of one test's random choices, and its seed: `SEARCHLIGHT_SEED` when set (to
/// replay a run), otherwise a random one. The seed is printed, so that any failing run can be
/// replayed.
///
/// ```swift
/// var (seed, random) = seededGenerator("BadInputTests.randomBytes")
/// let count = Int.random(in: 1...40, using: &random)
/// ```
public func seededGenerator(_ label: String) -> (seed: UInt64, generator: SplitMix) {
    let seed = UInt64(ProcessInfo.processInfo.environment["SEARCHLIGHT_SEED"] ?? "") ?? UInt64.random(in: 1...1_000_000)
    print("\(label): seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it)")
    return (seed, SplitMix(seed: seed))
}
