extension SearchlightModel {
    /// A column of an entity whose value the index keeps beside the text, so that searches can
    /// filter on it (`year >= 2020 AND tag = "swift"`) and count its values (facets).
    ///
    /// ```json
    /// "attributes": [{"column": "year"}, {"column": "tag"}, {"column": "acct_id", "name": "account"}]
    /// ```
    ///
    /// The value is kept exactly as SQLite stores it in the row (its storage class included),
    /// and compared with the column's type affinity and collation (BINARY, NOCASE or RTRIM;
    /// others compare as BINARY), so that a filter selects what the same `WHERE` would select
    /// on the table. An attribute's column is tracked: its updates reach the index.
    public struct Attribute: Codable, Hashable, Sendable {
        /// The column of the entity's table. When the app renames the column (`RENAME COLUMN`),
        /// Searchlight follows it here, and ``name`` keeps the name filters use.
        public var column: String
        /// The name filters and facets use (default: the column as first declared). Stays the
        /// same when the column is renamed.
        public var name: String

        public init(column: String, name: String? = nil) {
            self.column = column
            self.name = name ?? column
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case column, name }

        public init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, allowed: CodingKeys.self)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            column = try container.decode(String.self, forKey: .column)
            name = try container.decodeIfPresent(String.self, forKey: .name) ?? column
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(column, forKey: .column)
            // Written only when it differs (a followed rename): `{"column": "year"}` stays so.
            if name != column { try container.encode(name, forKey: .name) }
        }
    }

    /// A boost of an entity's relevance from one of its attributes: popularity (a number) or
    /// recency (a date).
    ///
    /// ```json
    /// "ranking": [{"attribute": "popularity", "weight": 1}, {"attribute": "updated_at", "halfLifeDays": 30}]
    /// ```
    ///
    /// The score of a match is `bm25 × (1 + Σ weight × boost)` (bm25 as FTS5 gives it: negative,
    /// lower is better, so a boost only ever improves a match), where `boost` is
    /// - for a number: `ln(1 + max(0, value))` (a NULL, text or BLOB value: 0);
    /// - with `halfLifeDays`, for a date: `0.5 ^ (max(0, age in days) / halfLifeDays)`, 1 for
    ///   a date now (or in the future), ½ at one half-life. A date is unix seconds (INTEGER or
    ///   REAL), or ISO-8601 text as SQLite's `julianday()` reads it (`2024-05-01`,
    ///   `2024-05-01 12:00:00`, `2024-05-01T12:00:00Z`); anything else: 0.
    public struct RankingHint: Codable, Hashable, Sendable {
        /// The ``Attribute/name`` of one of the entity's attributes.
        public var attribute: String
        /// How much the boost counts (default 1; positive).
        public var weight: Double
        /// Set: the attribute is a date, and its boost halves every this many days.
        public var halfLifeDays: Double?

        public init(attribute: String, weight: Double = 1, halfLifeDays: Double? = nil) {
            self.attribute = attribute
            self.weight = weight
            self.halfLifeDays = halfLifeDays
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case attribute, weight, halfLifeDays }

        public init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, allowed: CodingKeys.self)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            attribute = try container.decode(String.self, forKey: .attribute)
            weight = try container.decodeIfPresent(Double.self, forKey: .weight) ?? 1
            halfLifeDays = try container.decodeIfPresent(Double.self, forKey: .halfLifeDays)
        }
    }
}

extension SearchlightModel.Entity {
    /// Checks the attributes and ranking hints of the entity at `path`; returns the problem.
    func attributeProblem(at path: String) -> String? {
        if !attributes.isEmpty && fields.isEmpty { return "\(path).attributes needs fields: an entity with no fields is not indexed" }
        var names = Set<String>(), columns = Set<String>()
        for (index, attribute) in attributes.enumerated() {
            let attributePath = "\(path).attributes[\(index)]"
            if attribute.column.isEmpty { return "\(attributePath).column is empty" }
            if attribute.name.isEmpty { return "\(attributePath).name is empty" }
            if ["rowid", "oid", "_rowid_"].contains(attribute.name.lowercased()) {
                return "\(attributePath).name \"\(attribute.name)\" is reserved by SQLite; give the attribute another name"
            }
            if !names.insert(attribute.name.lowercased()).inserted { return "\(attributePath): attribute \"\(attribute.name)\" is declared twice" }
            if !columns.insert(attribute.column.lowercased()).inserted { return "\(attributePath): column \"\(attribute.column)\" is listed twice" }
        }
        for (index, hint) in ranking.enumerated() {
            let hintPath = "\(path).ranking[\(index)]"
            if !names.contains(hint.attribute.lowercased()) {
                let declared = attributes.map(\.name).joined(separator: ", ")
                return "\(hintPath).attribute \"\(hint.attribute)\" is not an attribute of the entity (attributes: \(declared.isEmpty ? "none" : declared))"
            }
            if !(hint.weight > 0) || !hint.weight.isFinite { return "\(hintPath).weight must be a positive number, got \(hint.weight)" }
            if let days = hint.halfLifeDays, !(days > 0) || !days.isFinite {
                return "\(hintPath).halfLifeDays must be a positive number, got \(days)"
            }
        }
        return nil
    }
}
