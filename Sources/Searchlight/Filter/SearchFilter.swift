import Foundation
import SearchlightHistory

/// A condition on the attributes of documents (``SearchlightModel/Attribute``), ANDed to a
/// search's full-text match: only documents whose attribute values satisfy it are counted,
/// ranked and faceted.
///
/// Parsed from text, with a small safe grammar (``init(parsing:)``):
///
/// ```swift
/// let filter = try SearchFilter(parsing: #"year >= 2020 AND (tag = "swift" OR tag IN ('rust', 'go')) AND NOT archived = 1"#)
/// ```
///
/// or built in code, with no string building:
///
/// ```swift
/// let year = SearchFilter.Attribute("year"), tag = SearchFilter.Attribute("tag")
/// let filter: SearchFilter = year >= 2020 && (tag == "swift" || tag.in(["rust", "go"])) && !SearchFilter.Attribute("archived").isNull
/// ```
///
/// Values are compared as SQLite compares them in a `WHERE` on the source table: with the
/// column's type affinity (an INTEGER column's `year = "2020"` matches 2020) and collation (a
/// NOCASE column's `tag = "Swift"` matches `swift`); a comparison with NULL is never true, and
/// `NOT` of it neither (SQL's three-valued logic). A filter compiles to SQL with bound
/// arguments only: its text never becomes SQL.
public indirect enum SearchFilter: Hashable, Sendable, CustomStringConvertible {
    /// A comparison operator.
    public enum Comparison: String, Hashable, Sendable, CaseIterable {
        case equal = "="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
    }

    /// `attribute op value`.
    case compare(_ attribute: String, _ comparison: Comparison, _ value: AttributeValue)
    /// `attribute IN (values…)` (at least one value).
    case oneOf(_ attribute: String, _ values: [AttributeValue])
    /// `attribute IS NULL`.
    case isNull(_ attribute: String)
    case not(SearchFilter)
    case and(SearchFilter, SearchFilter)
    case or(SearchFilter, SearchFilter)

    /// The most comparisons (and `IN`, `IS NULL` tests) a filter may hold.
    public static let maximumTerms = 64
    /// The most values an `IN (…)` list, or a whole filter, may hold.
    public static let maximumValues = 1_000
    /// The deepest nesting of parentheses and `NOT` a filter may have.
    public static let maximumDepth = 32

    /// An attribute by name, to build filters with operators:
    /// `SearchFilter.Attribute("year") >= 2020`.
    public struct Attribute: Sendable {
        public var name: String
        public init(_ name: String) { self.name = name }

        /// `name IN (values…)`.
        public func `in`(_ values: [AttributeValue]) -> SearchFilter { .oneOf(name, values) }
        /// `name IS NULL`.
        public var isNull: SearchFilter { .isNull(name) }
        /// `name IS NOT NULL`.
        public var isNotNull: SearchFilter { .not(.isNull(name)) }

        public static func == (a: Attribute, value: AttributeValue) -> SearchFilter { .compare(a.name, .equal, value) }
        public static func != (a: Attribute, value: AttributeValue) -> SearchFilter { .compare(a.name, .notEqual, value) }
        public static func < (a: Attribute, value: AttributeValue) -> SearchFilter { .compare(a.name, .less, value) }
        public static func <= (a: Attribute, value: AttributeValue) -> SearchFilter { .compare(a.name, .lessOrEqual, value) }
        public static func > (a: Attribute, value: AttributeValue) -> SearchFilter { .compare(a.name, .greater, value) }
        public static func >= (a: Attribute, value: AttributeValue) -> SearchFilter { .compare(a.name, .greaterOrEqual, value) }
    }

    public static func && (a: SearchFilter, b: SearchFilter) -> SearchFilter { .and(a, b) }
    public static func || (a: SearchFilter, b: SearchFilter) -> SearchFilter { .or(a, b) }
    public static prefix func ! (a: SearchFilter) -> SearchFilter { .not(a) }

    /// The attribute names the filter uses, in order of appearance (each once, as first spelled).
    public var attributes: [String] {
        var names: [String] = []
        func visit(_ filter: SearchFilter) {
            switch filter {
            case let .compare(name, _, _), let .oneOf(name, _), let .isNull(name):
                if !names.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) { names.append(name) }
            case let .not(inner): visit(inner)
            case let .and(a, b), let .or(a, b): visit(a); visit(b)
            }
        }
        visit(self)
        return names
    }

    /// The filter in the grammar of ``init(parsing:)``, fully parenthesized: parsing it gives
    /// this filter back.
    public var description: String {
        func name(_ name: String) -> String { "`" + name.replacingOccurrences(of: "`", with: "``") + "`" }
        switch self {
        case let .compare(attribute, comparison, value): return "\(name(attribute)) \(comparison.rawValue) \(value)"
        case let .oneOf(attribute, values): return "\(name(attribute)) IN (\(values.map(\.description).joined(separator: ", ")))"
        case let .isNull(attribute): return "\(name(attribute)) IS NULL"
        case let .not(inner): return "NOT (\(inner))"
        case let .and(a, b): return "(\(a)) AND (\(b))"
        case let .or(a, b): return "(\(a)) OR (\(b))"
        }
    }

    /// User text as an error message shows it, on one line: control characters escaped
    /// (`\n`, `\u{0}`), and at most 40 characters (``UserText/shown(_:limit:)``).
    static func shown(_ text: String) -> String { UserText.shown(text) }

    /// Checks the bounds (terms, values, depth) and that every `IN` has a value. Depth counts
    /// each `NOT` and each change between `AND` and `OR` (a chain of ANDs is one level).
    public func validate() throws(SearchlightError) {
        var terms = 0, values = 0, nodes = 0
        func visit(_ filter: SearchFilter, depth: Int, parent: Int) throws(SearchlightError) {
            // Counted on the way down: a huge tree is refused before the recursion gets deep.
            nodes += 1
            if nodes > 4 * Self.maximumTerms { throw SearchlightError(.invalidFilter, "invalid filter: more than \(Self.maximumTerms) comparisons") }
            if depth > Self.maximumDepth {
                throw SearchlightError(.invalidFilter, "invalid filter: nested deeper than \(Self.maximumDepth) levels")
            }
            switch filter {
            case .compare:
                terms += 1
                values += 1
            case let .oneOf(name, list):
                terms += 1
                values += list.count
                if list.isEmpty { throw SearchlightError(.invalidFilter, "invalid filter: \(SearchFilter.shown(name)) IN () has no value") }
            case .isNull:
                terms += 1
            case let .not(inner):
                try visit(inner, depth: depth + 1, parent: 0)
            case let .and(a, b):
                try visit(a, depth: parent == 1 ? depth : depth + 1, parent: 1)
                try visit(b, depth: parent == 1 ? depth : depth + 1, parent: 1)
            case let .or(a, b):
                try visit(a, depth: parent == 2 ? depth : depth + 1, parent: 2)
                try visit(b, depth: parent == 2 ? depth : depth + 1, parent: 2)
            }
            if terms > Self.maximumTerms { throw SearchlightError(.invalidFilter, "invalid filter: more than \(Self.maximumTerms) comparisons") }
            if values > Self.maximumValues { throw SearchlightError(.invalidFilter, "invalid filter: more than \(Self.maximumValues) values") }
        }
        try visit(self, depth: 0, parent: 0)
    }
}
