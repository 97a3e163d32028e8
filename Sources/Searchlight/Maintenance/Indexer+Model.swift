import GRDB
import SearchlightHistory

extension Indexer {
    /// Checks that the index can be built for `model` (the tokenizer exists, no field is named
    /// like an FTS5 reserved column) without touching any database: call it before installing.
    public static func validate(model: SearchlightModel) throws(SearchlightError) {
        for entity in model.entities {
            for field in entity.fields where ["rank", "rowid"].contains(field.column.lowercased()) {
                throw SearchlightError(.invalidModel, "entity \"\(entity.name)\": a field cannot be named \"\(field.column)\" (reserved by FTS5)")
            }
        }
        var sqliteVersion = ""
        do {
            let scratch = try DatabaseQueue()
            try scratch.write { db in
                sqliteVersion = try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? ""
                for (index, entity) in model.entities.enumerated() where !entity.fields.isEmpty {
                    let indexed = IndexedEntity(entity: entity, id: Int64(index + 1))
                    for statement in IndexSchema(generation: 1).createStatements(for: [indexed], tokenizer: model.tokenizer)
                    where !statement.hasPrefix("CREATE TABLE") {
                        try db.execute(sql: statement)
                    }
                }
            }
            // Segmented text needs the tokenizer to split on the separator Searchlight inserts.
            if IndexedText(tokenizer: model.tokenizer).segmentsCJK {
                let splits = try scratch.write { db -> Bool in
                    try db.execute(sql: "CREATE VIRTUAL TABLE temp.separator_check USING fts5(x, tokenize = \(SQLQuoting.literal(model.tokenizer)))")
                    try db.execute(sql: "INSERT INTO temp.separator_check VALUES (?)", arguments: [IndexedText.standard.prepare("a\u{1F}b 数据")])
                    return try Int.fetchOne(db, sql: #"SELECT count(*) FROM temp.separator_check WHERE separator_check MATCH '"a b" AND "数 据"'"#) == 1
                }
                if !splits {
                    throw SearchlightError(.invalidModel, "the model cannot be indexed: the tokenizer \"\(model.tokenizer)\" keeps control characters (U+001F) in tokens, and Searchlight separates CJK characters with U+001F: leave Cc out of its categories and tokenchars")
                }
            }
        } catch let error as DatabaseError {
            let reason = error.message ?? "\(error)"
            if let (feature, version) = Self.tokenizerRequirement(model.tokenizer, sqliteVersion: sqliteVersion) {
                throw SearchlightError(.invalidModel, "the model cannot be indexed: SQLite \(sqliteVersion) cannot create the tokenizer \"\(model.tokenizer)\": \(feature) needs SQLite \(version) or later (SQLite says: \(reason))", underlyingError: error)
            }
            throw SearchlightError(.invalidModel, "the model cannot be indexed (tokenizer \"\(model.tokenizer)\"): \(reason)", underlyingError: error)
        } catch {
            throw SearchlightError(wrapping: error, doing: "cannot check the model")
        }
    }
}

extension Indexer {
    /// Tokenizer features that need a SQLite newer than some systems have, from SQLite's release notes.
    static let tokenizerRequirements: [(tokenizer: String, option: String?, version: String)] = [
        ("trigram", "remove_diacritics", "3.45.0"),
        ("trigram", nil, "3.34.0"),
        ("unicode61", "remove_diacritics 2", "3.27.0"),
    ]

    /// The feature of `tokenizer` that this SQLite is too old for, and the version it needs.
    static func tokenizerRequirement(_ tokenizer: String, sqliteVersion: String) -> (feature: String, version: String)? {
        func parts(_ version: String) -> [Int] { version.split(separator: ".").map { Int($0) ?? 0 } }
        let words = tokenizer.lowercased().split(whereSeparator: \.isWhitespace).map(String.init)
        let spec = " " + words.joined(separator: " ") + " "
        for requirement in tokenizerRequirements where words.contains(requirement.tokenizer) {
            if let option = requirement.option, !spec.contains(" \(option)") { continue }
            guard parts(sqliteVersion).lexicographicallyPrecedes(parts(requirement.version)) else { continue }
            let feature = requirement.option.map { "the \(requirement.tokenizer) option \($0)" } ?? "the \(requirement.tokenizer) tokenizer"
            return (feature, requirement.version)
        }
        return nil
    }
}

extension SearchIndex {
    /// Documents in the index, by entity name (empty before the first indexing).
    public func documentCounts() throws(SearchlightError) -> [String: Int] {
        try migrateIfNeeded()
        return try SearchlightError.catching("cannot count indexed documents") {
            try store.databaseWriter.read { db in
                guard let (schema, entities) = try liveEntities(db) else { return [:] }
                var counts: [String: Int] = [:]
                for entity in entities {
                    counts[entity.entity.name] = entity.usesRowidKeys
                        ? try Int.fetchOne(db, sql: "SELECT count(*) FROM \(SQLQuoting.identifier(schema.ftsTable(entity.id)))") ?? 0
                        : try Int.fetchOne(db, sql: """
                            SELECT count(*) FROM \(SQLQuoting.identifier(schema.documentTable)) WHERE "entity_id" = ?
                            """, arguments: [entity.id]) ?? 0
                }
                return counts
            }
        }
    }
}
