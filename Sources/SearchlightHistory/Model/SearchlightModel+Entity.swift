extension SearchlightModel {
    /// One tracked table: its name in history and search results, its primary key, the columns
    /// the index reads, and what history keeps of a deleted row.
    public struct Entity: Codable, Hashable, Sendable {
        /// The entity name used in history and search results (e.g. `Note`).
        public var name: String
        /// The SQLite table (any name: it is always quoted).
        public var table: String
        /// The table's primary key column: a single column, whose values may be INTEGER, TEXT,
        /// REAL or BLOB (see ``ObjectID``); composite keys are not supported.
        public var primaryKey: String
        /// The indexed columns.
        public var fields: [Field]
        /// Columns whose values history keeps, as a tombstone, when a row is deleted.
        public var preserveOnDelete: [String]
        /// More columns whose updates history records (in `updatedColumns`), besides the indexed
        /// fields, which are always tracked. `nil`: the indexed fields only. The capture triggers
        /// reference no other column, so the app's migrations may drop or rename the others.
        public var trackedColumns: [String]?
        /// Columns whose values the index keeps beside the text, to filter and facet searches on
        /// (`SearchFilter`, `facets:`). They need not be fields, and are always tracked.
        public var attributes: [Attribute]
        /// Ranking hints: boosts of the bm25 score from attributes' values (``RankingHint``).
        public var ranking: [RankingHint]

        public init(name: String, table: String, primaryKey: String, fields: [Field] = [],
                    preserveOnDelete: [String] = [], trackedColumns: [String]? = nil,
                    attributes: [Attribute] = [], ranking: [RankingHint] = []) {
            self.name = name
            self.table = table
            self.primaryKey = primaryKey
            self.fields = fields
            self.preserveOnDelete = preserveOnDelete
            self.trackedColumns = trackedColumns
            self.attributes = attributes
            self.ranking = ranking
        }

        enum CodingKeys: String, CodingKey, CaseIterable {
            case name, table, primaryKey, fields, preserveOnDelete, trackedColumns, attributes, ranking
        }

        public init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, allowed: CodingKeys.self)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            table = try container.decode(String.self, forKey: .table)
            primaryKey = try container.decode(String.self, forKey: .primaryKey)
            fields = try container.decodeIfPresent([Field].self, forKey: .fields) ?? []
            preserveOnDelete = try container.decodeIfPresent([String].self, forKey: .preserveOnDelete) ?? []
            trackedColumns = try container.decodeIfPresent([String].self, forKey: .trackedColumns)
            attributes = try container.decodeIfPresent([Attribute].self, forKey: .attributes) ?? []
            ranking = try container.decodeIfPresent([RankingHint].self, forKey: .ranking) ?? []
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(table, forKey: .table)
            try container.encode(primaryKey, forKey: .primaryKey)
            try container.encode(fields, forKey: .fields)
            try container.encode(preserveOnDelete, forKey: .preserveOnDelete)
            try container.encodeIfPresent(trackedColumns, forKey: .trackedColumns)
            // Written only when set: models stored before they existed keep their text.
            if !attributes.isEmpty { try container.encode(attributes, forKey: .attributes) }
            if !ranking.isEmpty { try container.encode(ranking, forKey: .ranking) }
        }

        /// The field whose role is `title`, if any.
        public var titleField: Field? { fields.first { $0.role == .title } }
    }

    /// An indexed column of an entity.
    public struct Field: Codable, Hashable, Sendable {
        /// What a field means to search results.
        public enum Role: String, Codable, Hashable, Sendable {
            /// The display title of a search hit.
            case title
        }

        /// The column name.
        public var column: String
        /// The bm25 weight of this column in ranking (default 1).
        public var weight: Double
        /// The field's role, if any.
        public var role: Role?

        public init(column: String, weight: Double = 1, role: Role? = nil) {
            self.column = column
            self.weight = weight
            self.role = role
        }

        enum CodingKeys: String, CodingKey, CaseIterable { case column, weight, role }

        public init(from decoder: any Decoder) throws {
            try rejectUnknownKeys(decoder, allowed: CodingKeys.self)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            column = try container.decode(String.self, forKey: .column)
            weight = try container.decodeIfPresent(Double.self, forKey: .weight) ?? 1
            role = try container.decodeIfPresent(Role.self, forKey: .role)
        }
    }
}
