import Searchlight

/// Marks a query's words in prepared text (a title, a snippet's fragment) and shows it as
/// people read it, as the local index's `highlight()` does: a word is marked where it matches
/// a query word (or starts with a prefix), CJK characters where they spell a query's CJK run,
/// and neighbouring marked CJK characters read as one mark (`[数据库]`).
struct PostgresHighlighter {
    /// What a query marks, folded (``PostgresDocument/fold(_:)``).
    struct Terms: Hashable {
        var words: Set<String> = []
        var prefixes: Set<String> = []
        var cjkRuns: Set<[String]> = []
    }

    let analyzer: SearchTextAnalyzer
    let start: String
    let end: String

    /// `prepared` with the matches of `terms` between the markers, without the separators that
    /// preparation inserted.
    func highlight(_ prepared: String, _ terms: Terms) -> String {
        let scalars = Array(prepared.unicodeScalars)
        let tokens = analyzer.tokens(prepared: prepared)
        // Each token's place: tokens come in order, apart by characters that are no token.
        var ranges: [Range<Int>] = []
        var cursor = 0
        for token in tokens {
            let wanted = Array(token.text.unicodeScalars)
            var found = cursor
            while found + wanted.count <= scalars.count, !scalars[found..<found + wanted.count].elementsEqual(wanted) { found += 1 }
            guard found + wanted.count <= scalars.count else { break }
            ranges.append(found..<found + wanted.count)
            cursor = found + wanted.count
        }
        let folded = tokens.prefix(ranges.count).map { PostgresDocument.fold($0.text) }
        var marked = [Bool](repeating: false, count: ranges.count)
        for index in ranges.indices where tokens[index].kind == .word {
            let word = folded[index]
            marked[index] = terms.words.contains(word) || terms.prefixes.contains { word.hasPrefix($0) }
        }
        for run in terms.cjkRuns where !run.isEmpty && run.count <= ranges.count {
            for first in 0...(ranges.count - run.count)
            where (0..<run.count).allSatisfy({ tokens[first + $0].kind == .cjk && folded[first + $0] == run[$0] }) {
                for index in first..<first + run.count { marked[index] = true }
            }
        }
        var output = String.UnicodeScalarView()
        var next = 0
        for (index, range) in ranges.enumerated() where marked[index] {
            output.append(contentsOf: scalars[next..<range.lowerBound])
            output.append(contentsOf: start.unicodeScalars)
            output.append(contentsOf: scalars[range])
            output.append(contentsOf: end.unicodeScalars)
            next = range.upperBound
        }
        output.append(contentsOf: scalars[next...])
        return Self.display(String(output), start: start, end: end)
    }

    /// Prepared text as people read it: marks of neighbouring CJK characters merged, the
    /// separators (U+001F) and breaks (U+10FFFD) that preparation inserted removed.
    static func display(_ text: String, start: String, end: String) -> String {
        var text = text
        if !start.isEmpty || !end.isEmpty { text = text.replacingOccurrences(of: end + "\u{1F}" + start, with: "") }
        return String(String.UnicodeScalarView(text.unicodeScalars.filter { $0 != "\u{1F}" && $0 != "\u{10FFFD}" }))
    }
}
