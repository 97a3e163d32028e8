import Foundation

/// What Searchlight tracks and indexes: the entities (tables), their indexed fields, and
/// history settings. It is usually read from a JSON model file (see `Schemas/model.schema.json`):
///
/// ```json
/// {
///   "entities": [
///     { "name": "Note", "table": "notes", "primaryKey": "id",
///       "fields": [ {"column": "title", "weight": 10, "role": "title"}, {"column": "body"} ],
///       "preserveOnDelete": ["title"] }
///   ],
///   "tokenizer": "unicode61 remove_diacritics 2",
///   "history": {"maximumDurationSeconds": 604800}
/// }
/// ```
///
/// and can be built in code just as well:
///
/// ```swift
/// let model = try SearchlightModel(entities: [
///     .init(name: "Note", table: "notes", primaryKey: "id",
///           fields: [.init(column: "title", weight: 10, role: .title), .init(column: "body")])
/// ])
/// ```
///
/// Initializers validate what can be checked without a database (duplicates, empty names,
/// weights). Tables and columns are checked against the database when a ``HistoryStore`` opens.
///
/// A model value is always valid: its initializers check it, and its properties are read-only
/// (make another model to change one), so that a problem is told where the model is made, not
/// later at install.
public struct SearchlightModel: Codable, Hashable, Sendable {
    /// The tracked entities. Entity names and tables are unique.
    public internal(set) var entities: [SearchlightModel.Entity]
    /// The FTS5 tokenizer specification used by the index (e.g. `unicode61 remove_diacritics 2`).
    public internal(set) var tokenizer: String
    /// History retention settings.
    public internal(set) var history: HistoryOptions
    /// Whether traditional Chinese characters match their simplified forms (and the other way
    /// round): documents and queries are folded to simplified characters. Off by default.
    public internal(set) var foldChineseVariants = false

    public static let defaultTokenizer = "unicode61 remove_diacritics 2"

    /// Creates and validates a model.
    ///
    /// - Parameters:
    ///   - entities: the tracked entities (at least one; names and tables unique).
    ///   - tokenizer: the FTS5 tokenizer specification of the index.
    ///   - history: history retention settings.
    ///   - foldChineseVariants: whether traditional and simplified Chinese characters match each
    ///     other (the `foldChineseVariants` key of a model file). Off by default.
    ///
    /// ```swift
    /// let model = try SearchlightModel(
    ///     entities: [.init(name: "Note", table: "notes", primaryKey: "id", fields: [.init(column: "body")])],
    ///     foldChineseVariants: true)
    /// ```
    public init(
        entities: [SearchlightModel.Entity],
        tokenizer: String = SearchlightModel.defaultTokenizer,
        history: HistoryOptions = .init(),
        foldChineseVariants: Bool = false
    ) throws(SearchlightError) {
        self.entities = entities
        self.tokenizer = tokenizer
        self.history = history
        self.foldChineseVariants = foldChineseVariants
        try validate()
    }

    /// Reads and validates a JSON model.
    ///
    /// Throws ``SearchlightError`` with code `invalidModel` and a message naming the problem
    /// (with its JSON path) for invalid JSON, wrong types, missing keys or inconsistent values.
    public init(jsonData: Data) throws(SearchlightError) {
        do {
            self = try JSONDecoder().decode(SearchlightModel.self, from: jsonData)
        } catch let error as DecodingError {
            throw SearchlightError(.invalidModel, "invalid model: \(Self.describe(error))")
        } catch let error as SearchlightError {
            throw error
        } catch {
            throw SearchlightError(.invalidModel, "invalid model: \(error)")
        }
    }

    /// Reads and validates a JSON model file.
    public init(contentsOf url: URL) throws(SearchlightError) {
        let data: Data
        let shown = UserText.shown(url.path, limit: 200)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw SearchlightError(.invalidModel, "cannot read model file \(shown): no such file")
        }
        if isDirectory.boolValue { throw SearchlightError(.invalidModel, "cannot read model file \(shown): it is a directory") }
        do { data = try Data(contentsOf: url) } catch {
            let reason = (error as NSError).userInfo[NSUnderlyingErrorKey].map { ($0 as! NSError).localizedDescription } ?? "\(errno == 0 ? "unreadable" : String(cString: strerror(errno)))"
            throw SearchlightError(.invalidModel, "cannot read model file \(shown): \(reason)")
        }
        try self.init(jsonData: data)
    }

    /// The model as JSON, with sorted keys (stable, so that it can be stored and compared).
    public func jsonData() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding plain strings, numbers and arrays cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The entity with this name, if any.
    public func entity(named name: String) -> SearchlightModel.Entity? {
        entities.first { $0.name == name }
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case entities, tokenizer, history, foldChineseVariants }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        entities = try container.decode([SearchlightModel.Entity].self, forKey: .entities)
        tokenizer = try container.decodeIfPresent(String.self, forKey: .tokenizer) ?? Self.defaultTokenizer
        history = try container.decodeIfPresent(HistoryOptions.self, forKey: .history) ?? .init()
        foldChineseVariants = try container.decodeIfPresent(Bool.self, forKey: .foldChineseVariants) ?? false
        try validate()
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(entities, forKey: .entities)
        try container.encode(tokenizer, forKey: .tokenizer)
        try container.encode(history, forKey: .history)
        // Written only when set: models stored before the option existed keep their text.
        if foldChineseVariants { try container.encode(true, forKey: .foldChineseVariants) }
    }

    /// Checks everything that does not need a database.
    public func validate() throws(SearchlightError) {
        func fail(_ message: String) -> SearchlightError { SearchlightError(.invalidModel, "invalid model: \(message)") }
        if entities.isEmpty { throw fail("`entities` is empty: declare at least one entity") }
        var names = Set<String>(), tables = Set<String>()
        for (index, entity) in entities.enumerated() {
            let path = "entities[\(index)]"
            if entity.name.isEmpty { throw fail("\(path).name is empty") }
            if entity.table.isEmpty { throw fail("\(path).table is empty") }
            if entity.primaryKey.isEmpty { throw fail("\(path).primaryKey is empty: every entity needs a primary key column") }
            if !names.insert(entity.name).inserted { throw fail("duplicate entity name \"\(entity.name)\"") }
            if !tables.insert(entity.table.lowercased()).inserted {
                throw fail("table \"\(entity.table)\" is used by more than one entity")
            }
            if entity.table.lowercased().hasPrefix("searchlight_") || entity.table.lowercased().hasPrefix("sqlite_") {
                throw fail("\(path).table \"\(entity.table)\" is reserved for Searchlight or SQLite")
            }
            var columns = Set<String>()
            var titles = 0
            for (fieldIndex, field) in entity.fields.enumerated() {
                let fieldPath = "\(path).fields[\(fieldIndex)]"
                if field.column.isEmpty { throw fail("\(fieldPath).column is empty") }
                if !columns.insert(field.column.lowercased()).inserted {
                    throw fail("\(fieldPath): column \"\(field.column)\" is listed twice")
                }
                if !(field.weight > 0) || !field.weight.isFinite {
                    throw fail("\(fieldPath).weight must be a positive number, got \(field.weight)")
                }
                if field.role == .title { titles += 1 }
            }
            if titles > 1 { throw fail("\(path) has \(titles) fields with role \"title\"; at most one is allowed") }
            for column in entity.preserveOnDelete where column.isEmpty {
                throw fail("\(path).preserveOnDelete has an empty column name")
            }
            if let tracked = entity.trackedColumns {
                if tracked.isEmpty { throw fail("\(path).trackedColumns is empty; omit it to track the indexed fields only") }
                if tracked.contains(where: \.isEmpty) { throw fail("\(path).trackedColumns has an empty column name") }
            }
            if let problem = entity.attributeProblem(at: path) { throw fail(problem) }
        }
        if tokenizer.trimmingCharacters(in: .whitespaces).isEmpty { throw fail("`tokenizer` is empty") }
        if let seconds = history.maximumDurationSeconds, !(seconds > 0) || !seconds.isFinite {
            throw fail("history.maximumDurationSeconds must be a positive number")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            let text = codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
            return text.hasPrefix(".") ? String(text.dropFirst()) : (text.isEmpty ? "top level" : text)
        }
        switch error {
        case let .typeMismatch(type, context):
            return "\(path(context.codingPath)): expected \(Self.typeName(type))"
        case let .valueNotFound(type, context):
            return "\(path(context.codingPath)): expected \(Self.typeName(type)), found null"
        case let .keyNotFound(key, context):
            return "\(path(context.codingPath + [key])) is missing"
        case let .dataCorrupted(context):
            if context.codingPath.isEmpty { return "not valid JSON" }
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Double.Type, is Int.Type: "a number"
        case is Bool.Type: "a boolean"
        default: String(describing: type).hasPrefix("Array") ? "an array" : "an object"
        }
    }
}

/// History retention settings of a model (the `history` key of a model file).
public struct HistoryOptions: Codable, Hashable, Sendable {
    /// History older than this is deleted by cleanup even if a consumer has not processed it;
    /// that consumer's next fetch then throws `historyExpired`. `nil`: no limit.
    public var maximumDurationSeconds: Double?
    /// Write-only authors: cleanup never waits for them to process history.
    public var batchAuthors: [String]

    /// ``maximumDurationSeconds`` as a `Duration`.
    public var maximumDuration: Duration? { maximumDurationSeconds.map { .milliseconds(Int64(($0 * 1000).rounded())) } }

    public init(maximumDurationSeconds: Double? = nil, batchAuthors: [String] = []) {
        self.maximumDurationSeconds = maximumDurationSeconds
        self.batchAuthors = batchAuthors
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case maximumDurationSeconds, batchAuthors }

    public init(from decoder: any Decoder) throws {
        try rejectUnknownKeys(decoder, allowed: CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        maximumDurationSeconds = try container.decodeIfPresent(Double.self, forKey: .maximumDurationSeconds)
        batchAuthors = try container.decodeIfPresent([String].self, forKey: .batchAuthors) ?? []
    }
}

/// Model files are written by hand: a misspelled key (`"feilds"`) must be an error, not ignored.
func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ decoder: any Decoder, allowed: Keys.Type) throws {
    let container = try decoder.container(keyedBy: AnyKey.self)
    let known = Set(Keys.allCases.map(\.stringValue))
    if let unknown = container.allKeys.map(\.stringValue).sorted().first(where: { !known.contains($0) }) {
        throw DecodingError.dataCorrupted(.init(
            codingPath: container.codingPath + [AnyKey(stringValue: unknown)],
            debugDescription: "unknown key (expected one of: \(known.sorted().joined(separator: ", ")))"))
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
