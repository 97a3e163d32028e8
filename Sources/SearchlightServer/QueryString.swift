import Foundation
import SearchlightHistory

/// The parameters of a request's query string, decoded as browsers encode forms (`+` is a
/// space, `%XX` a byte of UTF-8): the user's text is parsed here, at the boundary, and a
/// malformed one is the caller's mistake (`invalidArgument`), said in one line.
struct QueryString: Sendable {
    private(set) var pairs: [(name: String, value: String)] = []

    init(_ query: String?) throws(SearchlightError) {
        guard let query, !query.isEmpty else { return }
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let (name, value) = part.firstIndex(of: "=").map { (part[..<$0], part[part.index(after: $0)...]) } ?? (part[...], ""[...])
            pairs.append((try Self.decode(name), try Self.decode(value)))
        }
    }

    /// Parameters built by the server itself (the search page's own search).
    init(pairs: [(name: String, value: String)]) { self.pairs = pairs }

    static func decode(_ text: Substring) throws(SearchlightError) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        guard let decoded = spaced.removingPercentEncoding else {
            throw SearchlightError(.invalidArgument, "malformed query string: \"\(UserText.shown(String(text.prefix(80))))\" is not valid percent-encoded UTF-8")
        }
        return decoded
    }

    /// The last value of `name` (nil if absent).
    subscript(_ name: String) -> String? { pairs.last { $0.name == name }?.value }

    /// Every value of `name`, in order.
    func all(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }

    /// The names that are not among `known`, each once.
    func unknown(_ known: Set<String>) -> [String] {
        var seen = Set<String>()
        return pairs.map(\.name).filter { !known.contains($0) && seen.insert($0).inserted }
    }
}
