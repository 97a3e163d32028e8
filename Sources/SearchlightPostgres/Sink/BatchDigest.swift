import Foundation
import SearchlightHistory

/// A digest of history transactions: 64-bit FNV-1a over each transaction's token, timestamp
/// (the bits of its seconds since 1970) and changes (entity, object id with its storage class,
/// change type), in order, as 16 hex digits.
///
/// It depends only on those bytes, never on Swift's per-process random hashing: two processes
/// (or two copies of a file) that read the same history compute the same digest, and a copy
/// whose history diverged computes another. The sink stores the digest of each batch beside
/// the checkpoint, so that a sink that crashed between its two commits recognizes its own
/// batch by digesting its local history over the same range.
struct BatchDigest {
    private var hash: UInt64 = 0xcbf2_9ce4_8422_2325

    init() {}

    /// The digest of `transactions`.
    init(_ transactions: some Sequence<HistoryTransaction>) {
        for transaction in transactions { add(transaction) }
    }

    mutating func add(_ transaction: HistoryTransaction) {
        add(UInt8(1))
        add(UInt64(bitPattern: transaction.token.rawValue))
        add(transaction.timestamp.timeIntervalSince1970.bitPattern)
        for change in transaction.changes {
            add(UInt8(2))
            add(change.entity)
            add(PostgresDocument.key(change.objectID))
            add(UInt8(truncatingIfNeeded: change.type.rawValue))
        }
    }

    /// 16 lower-case hex digits.
    var value: String {
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    private mutating func add(_ byte: UInt8) {
        hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    private mutating func add(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { add(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    /// The UTF-8 bytes, then their count (so that "ab"+"c" and "a"+"bc" differ).
    private mutating func add(_ text: String) {
        var count: UInt64 = 0
        for byte in text.utf8 { add(byte); count += 1 }
        add(count)
    }
}
