import GRDB

/// How search hits are ordered.
///
/// ```swift
/// // Newest first, then best match:
/// try index.search("kernel", order: .column("updated_at"))
/// ```
public enum SearchOrder: Hashable, Sendable {
    /// Best match first: bm25 with the fields' weights (the default).
    case relevance
    /// By a column of the entities' source tables (any column, indexed or not), then by
    /// relevance. Rows without a value (NULL) come last either way. Every searched entity's
    /// table must have the column. For each entity the value is read from its table, by key:
    /// ```sql
    /// SELECT rowid, rank, (SELECT s.<column> FROM <table> s WHERE s.<key> = <object id>) AS k
    /// FROM fts WHERE fts MATCH ? ORDER BY k IS NULL, k DESC, rank, rowid LIMIT ?
    /// ```
    /// Across entities, values compare as SQLite's BINARY collation does (numbers before
    /// text before blobs).
    case column(String, descending: Bool = true)

    /// Whether `a` sorts before `b` (values of a ``column(_:descending:)``), nil if they tie.
    static func precedes(_ a: DatabaseValue, _ b: DatabaseValue, descending: Bool) -> Bool? {
        func rank(_ value: DatabaseValue) -> Int {
            switch value.storage {
            case .null: 3 // last, whatever the direction
            case .int64, .double: 0
            case .string: 1
            case .blob: 2
            }
        }
        if a.isNull || b.isNull { return a.isNull == b.isNull ? nil : b.isNull }
        let (ra, rb) = (rank(a), rank(b))
        let ascending: Bool?
        switch (a.storage, b.storage) {
        case let (.int64(x), .int64(y)): ascending = x == y ? nil : x < y
        case (.int64, .double), (.double, .int64), (.double, .double):
            let x = Double.fromDatabaseValue(a) ?? 0, y = Double.fromDatabaseValue(b) ?? 0
            ascending = x == y ? nil : x < y
        case let (.string(x), .string(y)): ascending = x == y ? nil : Array(x.utf8).lexicographicallyPrecedes(y.utf8)
        case let (.blob(x), .blob(y)): ascending = x == y ? nil : x.lexicographicallyPrecedes(y)
        default: ascending = ra < rb
        }
        return ascending.map { descending ? !$0 : $0 }
    }
}
