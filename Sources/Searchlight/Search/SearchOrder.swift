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

    /// Whether `a` sorts before `b` (values of a ``column(_:descending:)``), nil if they tie:
    /// NULL last whatever the direction, the others as ``AttributeValue/binaryOrder(_:)`` orders them.
    static func precedes(_ a: DatabaseValue, _ b: DatabaseValue, descending: Bool) -> Bool? {
        if a.isNull || b.isNull { return a.isNull == b.isNull ? nil : b.isNull }
        switch AttributeValue(a).binaryOrder(AttributeValue(b)) {
        case .orderedAscending: return !descending
        case .orderedDescending: return descending
        default: return nil
        }
    }
}
