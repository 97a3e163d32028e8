import Foundation

/// Recall and precision of search on CJK text, against ground truth from plain substring
/// matching. Used by `CJKRecallTests` (a reduced form) and `searchlight-bench`
/// scenario 7 (the full corpora).
///
/// Ground truth: a document is relevant when its title or body contains the query as a
/// substring, after NFKC, lower-casing, and removing white space next to a CJK character
/// (the man pages are wrapped at 80 columns, so a line break can fall inside a word, and
/// writers of CJK text put spaces around Latin words or not: `Unix 的` and `Unix的`). A Latin
/// word counts as a whole word (no letter or digit just before or after it), since Searchlight
/// indexes Latin text by words. Queries of several words need every word.
public enum RecallEvaluation {
    public struct Document: Sendable {
        public var id: String
        public var title: String
        public var body: String
        public init(id: String, title: String, body: String) { self.id = id; self.title = title; self.body = body }
    }

    public struct Query: Sendable, CustomStringConvertible {
        public var category: String
        public var text: String
        public var asYouType = false
        /// The ids of the relevant documents.
        public var relevant: Set<String> = []
        public var description: String { "\(category): \(text)\(asYouType ? " (as you type)" : "")" }
    }

    public struct Row: Sendable, CustomStringConvertible {
        public var category: String
        public var queries = 0
        /// Relevant documents over all queries, and how many of them were found.
        public var relevant = 0
        public var found = 0
        /// Documents returned over all queries, and how many of them were relevant.
        public var returned = 0
        public var queriesWithoutHits = 0
        public var recall: Double { relevant == 0 ? 1 : Double(found) / Double(relevant) }
        public var precision: Double { returned == 0 ? 1 : Double(found) / Double(returned) }
        public var description: String {
            String(format: "%@: %d queries, recall %.4f (%d of %d), precision %.4f (%d returned)",
                   category, queries, recall, found, relevant, precision, returned)
        }
    }

    /// Reads a corpus of JSON lines, gunzipping `.gz` with the system's gzip.
    public static func load(_ path: String, limit: Int? = nil) throws -> [Document] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = path.hasSuffix(".gz") ? ["gzip", "-dc", path] : ["cat", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        struct Line: Decodable { var id: String; var title: String; var body: String }
        var documents: [Document] = []
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            let decoded = try JSONDecoder().decode(Line.self, from: line)
            documents.append(Document(id: decoded.id, title: decoded.title, body: decoded.body))
            if let limit, documents.count >= limit { break }
        }
        return documents
    }

    // MARK: - Ground truth

    /// A CJK letter (not CJK punctuation such as `・` or `。`).
    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.properties.isAlphabetic || scalar.properties.numericType != nil else { return false }
        switch scalar.value {
        case 0x1100...0x11FF, 0x3005...0x3007, 0x3040...0x30FF, 0x3100...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xAC00...0xD7AF, 0xF900...0xFAFF, 0x20000...0x3134F:
            return true
        default:
            return false
        }
    }

    static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isAlphabetic || scalar.properties.numericType != nil
    }

    /// Text as ground truth compares it: NFKC, lower case, no white space next to a CJK character.
    public static func comparable(_ text: String) -> [Unicode.Scalar] {
        let scalars = Array(text.precomposedStringWithCompatibilityMapping.lowercased().unicodeScalars)
        var output: [Unicode.Scalar] = []
        output.reserveCapacity(scalars.count)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar.properties.isWhitespace, let last = output.last {
                var next = index
                while next < scalars.count, scalars[next].properties.isWhitespace { next += 1 }
                if next < scalars.count, isCJK(last) && isWordCharacter(scalars[next]) || isCJK(scalars[next]) && isWordCharacter(last) {
                    index = next
                    continue
                }
            }
            output.append(scalar)
            index += 1
        }
        return output
    }

    /// Whether `text` holds `needle` where a Latin word in it is a whole word.
    static func contains(_ text: [Unicode.Scalar], _ needle: [Unicode.Scalar]) -> Bool {
        guard let first = needle.first, text.count >= needle.count else { return false }
        let wordStart = !isCJK(first) && isWordCharacter(first)
        let wordEnd = needle.last.map { !isCJK($0) && isWordCharacter($0) } ?? false
        var index = 0
        let end = text.count - needle.count
        while index <= end {
            if text[index] == first {
                var matched = true
                for offset in 1..<needle.count where text[index + offset] != needle[offset] { matched = false; break }
                if matched {
                    let before = index > 0 ? text[index - 1] : nil
                    let after = index + needle.count < text.count ? text[index + needle.count] : nil
                    let startOK = !wordStart || before.map { isCJK($0) || !isWordCharacter($0) } ?? true
                    let endOK = !wordEnd || after.map { isCJK($0) || !isWordCharacter($0) } ?? true
                    if startOK && endOK { return true }
                }
            }
            index += 1
        }
        return false
    }

    // MARK: - Queries

    /// Draws `perCategory` queries of each kind from `documents` and computes their ground truth.
    ///
    /// Kinds: 1, 2, 3 and 4 CJK characters taken anywhere in the text; "words" (a run of 2 to 4
    /// CJK characters between non-CJK characters, as written); "two words"; "as you type" (a
    /// run of 3 to 6 characters without its last one, as a prefix); "Latin + CJK" (a Latin word
    /// and a CJK word of the same document, as two words); "Latin glued to CJK" (a Latin word
    /// and up to 3 CJK characters right after it, written together: `CoreData持久化`).
    public static func queries(_ documents: [Document], perCategory: Int, seed: UInt64) -> [Query] {
        var random = SplitMix(seed: seed)
        let texts = documents.map { (comparable($0.title), comparable($0.body)) }
        // CJK runs and Latin-CJK pairs of each document's body.
        struct Runs { var runs: [[Unicode.Scalar]] = []; var latin: [[Unicode.Scalar]] = []; var glued: [[Unicode.Scalar]] = [] }
        let runs: [Runs] = texts.map { _, body in
            var result = Runs()
            var index = 0
            while index < body.count {
                if isCJK(body[index]) {
                    var end = index
                    while end < body.count, isCJK(body[end]) { end += 1 }
                    result.runs.append(Array(body[index..<end]))
                    index = end
                } else if body[index].isASCII, isWordCharacter(body[index]), index == 0 || !isWordCharacter(body[index - 1]) {
                    var end = index
                    while end < body.count, body[end].isASCII, isWordCharacter(body[end]) { end += 1 }
                    if end - index >= 3 { result.latin.append(Array(body[index..<end])) }
                    if end - index >= 2, end < body.count, isCJK(body[end]) {
                        var cjkEnd = end
                        while cjkEnd < body.count, isCJK(body[cjkEnd]), cjkEnd - end < 3 { cjkEnd += 1 }
                        result.glued.append(Array(body[index..<cjkEnd]))
                    }
                    index = end
                } else {
                    index += 1
                }
            }
            return result
        }
        func pick<T>(_ array: [T]) -> T? { array.isEmpty ? nil : array[Int(random.next() % UInt64(array.count))] }
        var queries: [Query] = []
        func draw(_ category: String, asYouType: Bool = false, _ make: () -> [[Unicode.Scalar]]?) {
            var made = 0, attempts = 0
            while made < perCategory, attempts < perCategory * 200 {
                attempts += 1
                guard let words = make(), !words.isEmpty else { continue }
                let text = words.map { String(String.UnicodeScalarView($0)) }.joined(separator: " ")
                var query = Query(category: category, text: text, asYouType: asYouType)
                for (offset, (title, body)) in texts.enumerated()
                where words.allSatisfy({ contains(title, $0) || contains(body, $0) }) {
                    query.relevant.insert(documents[offset].id)
                }
                queries.append(query)
                made += 1
            }
        }
        for length in 1...4 {
            draw("\(length) character\(length == 1 ? "" : "s")") {
                guard let document = pick(runs), let run = pick(document.runs.filter { $0.count >= length }) else { return nil }
                let start = Int(random.next() % UInt64(run.count - length + 1))
                return [Array(run[start..<start + length])]
            }
        }
        let words = runs.map { $0.runs.filter { (2...4).contains($0.count) } }
        let allWords = words.flatMap { $0 }
        draw("words") { pick(allWords).map { [$0] } }
        draw("two words") {
            guard let document = pick(words.filter { $0.count >= 2 }), let a = pick(document), let b = pick(document), a != b else { return nil }
            return [a, b]
        }
        draw("as you type", asYouType: true) {
            guard let document = pick(runs), let run = pick(document.runs.filter { (3...6).contains($0.count) }) else { return nil }
            return [Array(run.dropLast())]
        }
        draw("Latin + CJK") {
            guard let document = pick(runs), let latin = pick(document.latin),
                  let word = pick(document.runs.filter { (2...4).contains($0.count) }) else { return nil }
            return [latin, word]
        }
        let glued = runs.flatMap(\.glued)
        draw("Latin glued to CJK") { pick(glued).map { [$0] } }
        return queries
    }

    // MARK: - Evaluation

    /// Runs every query through `search` (ids of every hit) and compares with the ground truth.
    public static func evaluate(_ queries: [Query], search: (Query) throws -> Set<String>) rethrows -> (rows: [Row], misses: [String]) {
        var rows: [String: Row] = [:]
        var order: [String] = []
        var misses: [String] = []
        for query in queries {
            let hits = try search(query)
            if rows[query.category] == nil { order.append(query.category); rows[query.category] = Row(category: query.category) }
            let found = hits.intersection(query.relevant).count
            rows[query.category]!.queries += 1
            rows[query.category]!.relevant += query.relevant.count
            rows[query.category]!.found += found
            rows[query.category]!.returned += hits.count
            if hits.isEmpty { rows[query.category]!.queriesWithoutHits += 1 }
            if found < query.relevant.count || hits.count > found, misses.count < 20 {
                misses.append("\(query): \(found) of \(query.relevant.count) relevant found, \(hits.count - found) irrelevant returned: missed \(query.relevant.subtracting(hits).sorted().prefix(3)), extra \(hits.subtracting(query.relevant).sorted().prefix(3))")
            }
        }
        return (order.map { rows[$0]! }, misses)
    }
}
