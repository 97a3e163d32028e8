import GRDB
import SearchlightHistory

/// Object ids bound to the `IN (…)` list of a cached statement.
///
/// A chunk of up to ``maximumCount`` ids is padded with NULLs (`k IN (1, 2, NULL)` matches 1
/// and 2 and nothing else) to a size class (powers of two, then ``maximumCount``), so that
/// reading a batch's rows or looking up its documents reuses a handful of prepared statements
/// (`Database.cachedStatement`) instead of preparing one for every chunk. The arguments are
/// built in one array: GRDB's sequence initializer maps through a key path per value.
struct KeyList {
    static let maximumCount = 500

    /// `?, ?, …`: as many as the size class.
    let placeholders: String
    /// `prefix` then the ids, then the padding.
    let arguments: StatementArguments

    init(_ ids: some Collection<ObjectID>, after prefix: [(any DatabaseValueConvertible)?] = []) {
        precondition(ids.count <= Self.maximumCount)
        let size = Self.sizeClass(ids.count)
        var values: [(any DatabaseValueConvertible)?] = prefix
        values.reserveCapacity(prefix.count + size)
        for id in ids { values.append(id) }
        for _ in ids.count..<size { values.append(nil) }
        placeholders = Self.placeholders(size)
        arguments = StatementArguments(values)
    }

    /// `?,?,…,?` for `count` values. Built by repeating a literal: GRDB's
    /// `databaseQuestionMarks(count:)` joins a sequence through unspecialized generic code, about
    /// 5,700 instructions a key of a batch (callgrind).
    static func placeholders(_ count: Int) -> String {
        count <= 0 ? "" : String(repeating: "?,", count: count - 1) + "?"
    }

    /// The smallest power of two at least `count`, or ``maximumCount``.
    static func sizeClass(_ count: Int) -> Int {
        var size = 1
        while size < count { size *= 2 }
        return min(size, maximumCount)
    }
}
