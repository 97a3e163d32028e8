import Foundation

/// The seeds a random test runs: the same fixed set in CI and on a fresh clone, so that every
/// run tries the same cases; more on request.
///
/// - `SEARCHLIGHT_SEED=N` runs seed N alone (to replay a failing run);
/// - `SEARCHLIGHT_RANDOM_SEEDS=K` adds K freshly drawn seeds to the fixed ones (to search for
///   new failures; each seed is printed, so that a failure can be replayed);
/// - otherwise `count` fixed seeds, derived from `label`.
public func testSeeds(_ label: String, count: Int = 1) -> [UInt64] {
    let environment = ProcessInfo.processInfo.environment
    let seeds: [UInt64]
    if let replay = environment["SEARCHLIGHT_SEED"].flatMap(UInt64.init) {
        seeds = [replay]
    } else {
        let extra = environment["SEARCHLIGHT_RANDOM_SEEDS"].flatMap(Int.init) ?? 0
        seeds = fixedSeeds(label, count: count) + (0..<max(extra, 0)).map { _ in UInt64.random(in: 1...1_000_000) }
    }
    print("\(label): seeds \(seeds.map(String.init).joined(separator: ", ")) (SEARCHLIGHT_SEED=N replays one)")
    return seeds
}

/// The generator of one test's random choices, and its seed: `SEARCHLIGHT_SEED` when set (to
/// replay a run), a freshly drawn one when `SEARCHLIGHT_RANDOM_SEEDS` is set, otherwise a fixed
/// seed derived from `label` (CI and a fresh clone run the same case). The seed is printed.
///
/// ```swift
/// var (seed, random) = seededGenerator("BadInputTests.randomBytes")
/// let count = Int.random(in: 1...40, using: &random)
/// ```
public func seededGenerator(_ label: String) -> (seed: UInt64, generator: SplitMix) {
    let environment = ProcessInfo.processInfo.environment
    let seed: UInt64
    if let replay = environment["SEARCHLIGHT_SEED"].flatMap(UInt64.init) {
        seed = replay
    } else if (environment["SEARCHLIGHT_RANDOM_SEEDS"].flatMap(Int.init) ?? 0) > 0 {
        seed = UInt64.random(in: 1...1_000_000)
    } else {
        seed = fixedSeeds(label, count: 1)[0]
    }
    print("\(label): seed \(seed) (SEARCHLIGHT_SEED=\(seed) replays it)")
    return (seed, SplitMix(seed: seed))
}

/// `count` seeds from 1 to 1,000,000 that depend on `label` alone (FNV-1a of its UTF-8 bytes).
private func fixedSeeds(_ label: String, count: Int) -> [UInt64] {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in label.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return (0..<UInt64(max(count, 1))).map { (hash &+ $0 &* 7_919) % 1_000_000 + 1 }
}
