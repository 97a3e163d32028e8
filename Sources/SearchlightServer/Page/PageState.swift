import Foundation
import Searchlight

/// What the search page at `/` shows, as its URL says it: `q`, the filters chosen (each
/// `filter` a clause of the filter grammar, ANDed), `entity`, `source` (PostgreSQL), and
/// `cursor` for a next page without JavaScript. Unknown parameters are ignored: the page is
/// for people, and links carry what links carry.
struct PageState: Sendable, Equatable {
    var text = ""
    var filters: [String] = []
    var entities: [String] = []
    var sources: [String] = []
    var cursor: String?
    /// A parameter the URL gives twice that the page takes once.
    var repeated: String?

    init(text: String = "", filters: [String] = [], entities: [String] = [], sources: [String] = [], cursor: String? = nil) {
        self.text = text
        self.filters = filters
        self.entities = entities
        self.sources = sources
        self.cursor = cursor
    }

    /// Parameters the page takes once.
    static let single = ["q", "cursor"]

    init(_ query: QueryString) {
        repeated = Self.single.first { name in query.all(name).count > 1 }
        text = query["q"] ?? ""
        filters = query.all("filter").filter { !$0.isEmpty }
        entities = query.all("entity").filter { !$0.isEmpty }
        sources = query.all("source").filter { !$0.isEmpty }
        cursor = query["cursor"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Filters, entities and sources a page may hold at once.
    static let maximumChoices = 16

    /// Why the page refuses this state, before it renders anything of it (each link of a page
    /// repeats its filters), or nil.
    func refusal(_ limits: SearchServer.Limits) -> String? {
        if let repeated { return "parameter \"\(repeated)\" is given more than once" }
        if text.count > limits.maximumQueryLength {
            return "q is \(text.count) characters long; at most \(limits.maximumQueryLength) are allowed"
        }
        if filters.count > Self.maximumChoices || entities.count > Self.maximumChoices || sources.count > Self.maximumChoices {
            return "a page holds at most \(Self.maximumChoices) filters, \(Self.maximumChoices) entities and \(Self.maximumChoices) sources"
        }
        let length = filters.reduce(0) { $0 + $1.count + 10 } + entities.reduce(0) { $0 + $1.count } + sources.reduce(0) { $0 + $1.count }
        if length > limits.maximumFilterLength {
            return "the page's filters are \(length) characters long; at most \(limits.maximumFilterLength) are allowed"
        }
        if let cursor, cursor.count > 64 { return "invalid cursor" }
        return nil
    }

    /// The API's parameters for this page, in the order the page's script sends them (a
    /// cursor's fingerprint covers them): the last word as a prefix, private-use highlights.
    func apiParameters(facets: [String], limit: Int) -> [(name: String, value: String)] {
        var pairs: [(name: String, value: String)] = [("q", text), ("prefix", "true"), ("highlight", "private-use"), ("limit", String(limit))]
        if !filters.isEmpty { pairs.append(("filter", Self.conjunction(filters))) }
        pairs += facets.map { ("facet", $0) }
        pairs += entities.map { ("entity", $0) }
        pairs += sources.map { ("source", $0) }
        if let cursor { pairs.append(("cursor", cursor)) }
        return pairs
    }

    /// The page's clauses as one filter: `(a) AND (b)`.
    static func conjunction(_ clauses: [String]) -> String {
        clauses.count == 1 ? clauses[0] : clauses.map { "(\($0))" }.joined(separator: " AND ")
    }

    /// The page's own URL for this state (no cursor unless given).
    func url(cursor: String? = nil) -> String {
        var pairs: [(String, String)] = []
        if !text.isEmpty { pairs.append(("q", text)) }
        pairs += filters.map { ("filter", $0) } + entities.map { ("entity", $0) } + sources.map { ("source", $0) }
        if let cursor { pairs.append(("cursor", cursor)) }
        guard !pairs.isEmpty else { return "/" }
        return "/?" + pairs.map { Self.encode($0) + "=" + Self.encode($1) }.joined(separator: "&")
    }

    /// Percent-encodes as `URLSearchParams` does (a space is `+`).
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "): out += "+"
            default: out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// The filter clause that chooses `value` of `attribute` (as the page's script writes it),
    /// or nil for a value the grammar cannot name (a BLOB).
    static func clause(_ attribute: String, _ value: AttributeValue) -> String? {
        let name = "`" + attribute.replacingOccurrences(of: "`", with: "``") + "`"
        switch value {
        case .null: return "\(name) IS NULL"
        case let .integer(number): return "\(name) = \(number)"
        case let .real(number): return number.isFinite ? "\(name) = \(number)" : nil
        case let .text(text): return "\(name) = \"\(text.replacingOccurrences(of: "\"", with: "\"\""))\""
        case .blob: return nil
        }
    }

    func toggling(filter clause: String) -> PageState {
        var next = self
        next.cursor = nil
        if let index = next.filters.firstIndex(of: clause) { next.filters.remove(at: index) } else { next.filters.append(clause) }
        return next
    }

    func toggling(entity: String) -> PageState {
        var next = self
        next.cursor = nil
        next.entities = entities == [entity] ? [] : [entity]
        return next
    }

    func toggling(source: String) -> PageState {
        var next = self
        next.cursor = nil
        next.sources = sources == [source] ? [] : [source]
        return next
    }
}
