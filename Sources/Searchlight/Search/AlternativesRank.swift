import Foundation
import GRDB
import GRDBSQLite

/// The FTS5 auxiliary function `searchlight_alternatives(fts, groups, weight…)` that ranks the
/// typo tier (``SearchIndex/rankTypos(_:exact:in:needed:order:_:)``): bm25 as FTS5 computes it,
/// except that the phrases of one group (a query word and its corrections) are alternatives,
/// and a match scores its best alternative instead of their sum. A document that holds
/// `function` and `functions` is no better a match for `fuonction` than one that holds
/// `function` alone; with FTS5's own bm25 it outranked the document that meant it.
///
/// `groups` gives each phrase of the query expression, in order, its group: `"0,0,0,1,-1"`
/// (a negative group is left out: the excluded words). The weights are the fields', as the
/// index's own `rank` has them (``IndexSchema/rankFunction(_:)``). For each group, the score
/// of phrase `i` is FTS5's: `idf(i) × f(i) × (k1 + 1) / (f(i) + k1 × (1 − b + b × D / avgD))`,
/// with `f(i)` the weighted count of its instances in the row, `D` the row's tokens, `k1` 1.2
/// and `b` 0.75; the result is minus the sum of the groups' best, as FTS5's `rank` (lower is
/// better).
///
/// It is registered on a connection once (``register(_:)``), through FTS5's own API.
enum AlternativesRank {
    static let name = "searchlight_alternatives"

    /// Registers the function on `db` unless it is there already.
    static func register(_ db: Database) throws {
        if try Bool.fetchOne(db.cachedStatement(sql: "SELECT count(*) > 0 FROM pragma_function_list WHERE name = ?"), arguments: [name]) == true {
            return
        }
        let api = FTS5.api(db)
        let code = name.withCString { cName in
            api.pointee.xCreateFunction(UnsafeMutablePointer(mutating: api), cName, nil, function, nil)
        }
        guard code == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "could not register \(name)") }
    }

    /// What the function reads once per query: each phrase's group and IDF, the average
    /// document length, the weights.
    final class Statistics {
        var groups: [Int] = []
        var idf: [Double] = []
        var averageLength = 1.0
        var weights: [Double] = []
        /// Scratch of one row, kept for the next (one statement runs on one thread): each
        /// phrase's weighted count, each group's best score.
        var frequency: [Double] = []
        var best: [Double] = []
    }

    static let k1 = 1.2
    static let b = 0.75

    private static let function: fts5_extension_function = { api, fts, context, count, values in
        guard let api, let context else { return }
        let code = score(api.pointee, fts, context, Int(count), values)
        if code != SQLITE_OK { sqlite3_result_error_code(context, code) }
    }

    private static func score(_ api: Fts5ExtensionApi, _ fts: OpaquePointer?, _ context: OpaquePointer,
                              _ count: Int, _ values: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
        var statistics: Statistics
        if let stored = api.xGetAuxdata(fts, 0) {
            statistics = Unmanaged<Statistics>.fromOpaque(stored).takeUnretainedValue()
        } else {
            statistics = Statistics()
            let code = prepare(statistics, api, fts, count, values)
            guard code == SQLITE_OK else { return code }
            let code2 = api.xSetAuxdata(fts, Unmanaged.passRetained(statistics).toOpaque()) { pointer in
                if let pointer { Unmanaged<Statistics>.fromOpaque(pointer).release() }
            }
            guard code2 == SQLITE_OK else { return code2 }
        }
        var instances: Int32 = 0
        var code = api.xInstCount(fts, &instances)
        guard code == SQLITE_OK else { return code }
        for i in statistics.frequency.indices { statistics.frequency[i] = 0 }
        for index in 0..<instances {
            var phrase: Int32 = 0, column: Int32 = 0, offset: Int32 = 0
            code = api.xInst(fts, index, &phrase, &column, &offset)
            guard code == SQLITE_OK else { return code }
            let i = Int(phrase), c = Int(column)
            guard i < statistics.frequency.count else { continue }
            statistics.frequency[i] += c < statistics.weights.count ? statistics.weights[c] : 1
        }
        var length: Int32 = 0
        code = api.xColumnSize(fts, -1, &length)
        guard code == SQLITE_OK else { return code }
        let norm = k1 * (1 - b + b * Double(length) / statistics.averageLength)
        for g in statistics.best.indices { statistics.best[g] = 0 }
        for (i, f) in statistics.frequency.enumerated() where f > 0 && statistics.groups[i] >= 0 {
            let term = statistics.idf[i] * f * (k1 + 1) / (f + norm)
            statistics.best[statistics.groups[i]] = max(statistics.best[statistics.groups[i]], term)
        }
        sqlite3_result_double(context, -statistics.best.reduce(0, +))
        return SQLITE_OK
    }

    /// Reads the groups and weights from the arguments, and each phrase's IDF and the average
    /// length from FTS5 (as its bm25 does: a phrase's rows are counted by a query of it).
    private static func prepare(_ statistics: Statistics, _ api: Fts5ExtensionApi, _ fts: OpaquePointer?,
                                _ count: Int, _ values: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
        guard count >= 1, let values, let text = sqlite3_value_text(values[0]) else { return SQLITE_ERROR }
        let phrases = Int(api.xPhraseCount(fts))
        let listed = String(cString: text).split(separator: ",").map { Int($0) ?? -1 }
        statistics.groups = (0..<phrases).map { $0 < listed.count ? listed[$0] : -1 }
        statistics.frequency = Array(repeating: 0, count: phrases)
        statistics.best = Array(repeating: 0, count: (statistics.groups.max() ?? -1) + 1)
        statistics.weights = (1..<max(count, 1)).map { sqlite3_value_double(values[$0]) }
        var rows: Int64 = 0, tokens: Int64 = 0
        var code = api.xRowCount(fts, &rows)
        guard code == SQLITE_OK else { return code }
        code = api.xColumnTotalSize(fts, -1, &tokens)
        guard code == SQLITE_OK else { return code }
        statistics.averageLength = rows > 0 && tokens > 0 ? Double(tokens) / Double(rows) : 1
        statistics.idf = []
        for phrase in 0..<phrases {
            var hits: Int64 = 0
            if statistics.groups[phrase] >= 0 {
                code = api.xQueryPhrase(fts, Int32(phrase), &hits) { _, _, pointer in
                    pointer?.assumingMemoryBound(to: Int64.self).pointee += 1
                    return SQLITE_OK
                }
                guard code == SQLITE_OK else { return code }
            }
            let idf = log((Double(rows) - Double(hits) + 0.5) / (Double(hits) + 0.5))
            statistics.idf.append(idf <= 0 ? 1e-6 : idf)
        }
        return SQLITE_OK
    }
}
