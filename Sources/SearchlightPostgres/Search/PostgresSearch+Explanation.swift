import Foundation
import PostgresNIO
import Searchlight
import SearchlightHistory

/// Why a search on PostgreSQL matched nothing, as locally (``Searchlight/SearchExplanation``):
/// the same reasons and messages, and the same "did you mean", chosen by the same rules
/// (``Searchlight/SearchExplanation/Draft``) from PostgreSQL's vocabulary of the searched
/// sources instead of the local index's:
///
/// ```sql
/// SELECT v.word FROM vocabulary v WHERE v.word >= $1 AND v.source = ANY($2) ORDER BY v.word LIMIT 1;  -- known?
/// SELECT v.word, sum(v.documents) FROM vocabulary v
/// WHERE ((v.word >= 'ke' AND v.word < 'kf') OR (v.word >= 'ek' AND v.word < 'el') OR …) AND v.source = ANY($2)
/// GROUP BY v.word;                                                                            -- candidates
/// ```
///
/// A suggestion is kept only when an exact search of it (in the same sources and entities)
/// matches. PostgreSQL's vocabulary counts the words of every entity of a source, where the
/// local index reads the searched entities' only: with `entities`, a word another entity
/// holds is known (nothing is suggested for it).
extension PostgresSearch {
    func explanation(for text: String, asYouType: Bool, sources names: Set<String>?, entities: Set<String>?,
                     _ connection: PostgresConnection) async throws -> SearchExplanation {
        var binds = SQLBinds()
        var sql = "SELECT model::text FROM \(PostgresSchema.quoted(schema)).sources"
        if let names { sql += " WHERE source = ANY(\(binds.add(names.sorted())))" }
        var models: [SearchlightModel] = []
        for try await json in try await connection.query(PostgresQuery(unsafeSQL: sql + " ORDER BY source", binds: binds.bindings), logger: logger).decode(String.self) {
            models.append(try SearchlightModel(jsonData: Data(json.utf8)))
        }
        let searched = entities ?? Set(models.flatMap { $0.entities.map(\.name) })
        let columns = Set(models.flatMap { $0.entities.filter { searched.contains($0.name) }.flatMap { $0.fields.map(\.column) } })
        // The text read as the first group of sources reads it (one tokenizer, almost always).
        let model = models.min { "\($0.tokenizer)\u{0}\($0.foldChineseVariants)" < "\($1.tokenizer)\u{0}\($1.foldChineseVariants)" }
        let draft = SearchExplanation.Draft(text: text, asYouType: asYouType, columns: columns, analyzer: model.map(SearchTextAnalyzer.init(model:)),
                                            fold: PostgresDocument.fold)
        let finder = PostgresNeighbourhood(schema: schema, sources: names?.sorted(), connection: connection, logger: logger)
        var corrections: [String: String] = [:]
        // (The vocabulary keeps words of at most 64 bytes: a longer one cannot be told known.)
        for word in draft.words where SearchTextAnalyzer.isVocabularyWord(word) {
            if try await finder.contains(word, prefix: false) { continue }
            let candidates = try await finder.documents(beginningWith: SearchExplanation.Draft.candidatePrefixes(of: word))
            if let best = SearchExplanation.Draft.correction(of: word, among: candidates) { corrections[word] = best }
        }
        var suggestions: [String] = []
        if let suggestion = draft.suggestion(corrections) {
            let refinements = Refinements(filter: nil, facets: [], facetLimit: 1, typos: .off)
            let found = try await run(suggestion, asYouType: asYouType, sources: names, entities: entities, limit: 0, offset: 0,
                                      refinements: refinements, connection)
            if found.total > 0 { suggestions.append(suggestion) }
        }
        return draft.explanation(suggestions: suggestions)
    }
}
