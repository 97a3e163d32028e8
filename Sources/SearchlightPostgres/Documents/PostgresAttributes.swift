import Foundation
import Searchlight

/// The attribute values of a document as PostgreSQL keeps them (`documents.attributes`, a
/// `jsonb` object), in a form whose comparisons in SQL follow SQLite's
/// (``Searchlight/AttributeComparison``): what a filter selects and how a facet groups on
/// PostgreSQL is what they select and group locally.
///
/// Each attribute is a key (its name case-folded: filters name attributes without regard to
/// case, as the local search does), and each value an array whose first element is its class in
/// SQLite's order of values: a NULL is no key at all,
///
/// | value | stored | compared as |
/// |---|---|---|
/// | INTEGER `2020` | `[1, 2020]` | `numeric` |
/// | REAL `1.5` | `[1, 1.5, "r"]` | `numeric`: the shortest digits that read back as the same double (exact digits from 2^53, where every double is an integer), so integers and reals compare as SQLite compares them |
/// | TEXT `Swift` (NOCASE) | `[2, "7377696674", "5377696674"]` | the hex of the collation's bytes (``Searchlight/AttributeComparison/collationKey(_:)``), under `COLLATE "C"`; then the original's hex when it differs |
/// | BLOB | `[3, "00ff"]` | its hex, under `COLLATE "C"` |
///
/// Hex keeps byte order under `COLLATE "C"` and holds what PostgreSQL's text cannot (NUL).
/// `attr op value` compiles to
/// ```sql
/// CASE WHEN d.attributes->'year' IS NULL THEN NULL
///      WHEN (d.attributes->'year'->>0)::int <> 1 THEN (d.attributes->'year'->>0)::int > 1  -- another class: SQLite's order
///      ELSE (d.attributes->'year'->1)::numeric > $1::numeric END
/// ```
/// with the value converted first as the column's affinity converts it
/// (``Searchlight/AttributeComparison/operand(_:)``).
enum PostgresAttributes {
    /// The `attributes` column of a document: nil for an entity without attributes.
    static func encode(_ values: [String: AttributeValue], comparisons: [String: AttributeComparison]) -> String? {
        guard !values.isEmpty else { return nil }
        var members: [String] = []
        for name in values.keys.sorted() {
            guard let element = element(values[name]!, comparison: comparisons[name] ?? AttributeComparison()) else { continue }
            members.append(jsonString(key(name)) + ":" + element)
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// The key of an attribute: its name case-folded, as the local search compares attribute
    /// names (`caseInsensitiveCompare`: `GRÖSSE` names `Größe`).
    static func key(_ name: String) -> String {
        name.folding(options: .caseInsensitive, locale: nil)
    }

    /// The JSON array of one value; nil for NULL.
    static func element(_ value: AttributeValue, comparison: AttributeComparison) -> String? {
        switch value {
        case .null: return nil
        case let .integer(number): return "[1,\(number)]"
        case let .real(number):
            guard !number.isNaN else { return nil }
            return "[1,\(decimal(number)),\"r\"]"
        case let .text(text):
            let original = Array(text.utf8), key = comparison.collationKey(text)
            return key == original ? "[2,\"\(hex(key))\"]" : "[2,\"\(hex(key))\",\"\(hex(original))\"]"
        case let .blob(data): return "[3,\"\(hex(Array(data)))\"]"
        }
    }

    /// A double as `numeric` digits that compare with every integer and double as the double
    /// does: the shortest that read back as it below 2^53 (no integer lies between it and
    /// them), its exact integer digits from there; an infinity as a number beyond every double.
    static func decimal(_ number: Double) -> String {
        if number.isInfinite { return number < 0 ? "-1e400" : "1e400" }
        if abs(number) >= 9_007_199_254_740_992 { return String(format: "%.0f", number) }
        return "\(number)"
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        func nibble(_ digit: UInt8) -> UInt8 { digit >= 0x61 ? digit - 0x61 + 10 : digit - 0x30 }
        return stride(from: 0, to: digits.count - 1, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
    }

    /// The value of a stored element's parts (`->>0`, `->>1`, `->>2`): nil parts are NULL.
    static func value(class kind: String?, first: String?, second: String?) -> AttributeValue {
        switch (kind, first) {
        case let ("1", number?):
            if second == nil, let integer = Int64(number) { return .integer(integer) }
            return .real(Double(number) ?? .nan)
        case let ("2", key?): return .text(String(decoding: bytes(hex: second ?? key), as: UTF8.self))
        case let ("3", data?): return .blob(Data(bytes(hex: data)))
        default: return .null
        }
    }

    /// Whether `a` sorts before `b` by a sort column (nil if they tie), as the local search
    /// merges its entities' pages (`SearchOrder`): NULL last whatever the direction, the others
    /// as ``Searchlight/AttributeValue/binaryOrder(_:)`` orders them.
    static func precedes(_ a: AttributeValue, _ b: AttributeValue, descending: Bool) -> Bool? {
        if a == .null || b == .null { return (a == .null) == (b == .null) ? nil : b == .null }
        switch a.binaryOrder(b) {
        case .orderedAscending: return !descending
        case .orderedDescending: return descending
        default: return nil
        }
    }

    /// A JSON string (an attribute's name): one encoder for every document (encoding is thread-safe).
    static func jsonString(_ text: String) -> String {
        String(decoding: (try? encoder.encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }

    private static let encoder = JSONEncoder()

    // MARK: - Filters

    /// `filter` as a condition on `d.attributes`, for documents whose attributes compare as
    /// `comparisons` say (by ``key(_:)``); nil when one of its attributes is not among them
    /// (the entity does not declare it: nothing matches).
    static func condition(_ filter: SearchFilter, comparisons: [String: AttributeComparison], _ binds: inout SQLBinds) -> String? {
        switch filter {
        case let .compare(name, comparison, value):
            guard let rules = comparisons[key(name)] else { return nil }
            return compare(key(name), comparison, rules.operand(value), rules, &binds)
        case let .oneOf(name, values):
            guard let rules = comparisons[key(name)] else { return nil }
            return oneOf(key(name), values.map(rules.operand), rules, &binds)
        case let .isNull(name):
            guard comparisons[key(name)] != nil else { return nil }
            return "(d.attributes->\(binds.add(key(name))) IS NULL)"
        case let .not(inner):
            return condition(inner, comparisons: comparisons, &binds).map { "(NOT \($0))" }
        case let .and(a, b):
            guard let a = condition(a, comparisons: comparisons, &binds), let b = condition(b, comparisons: comparisons, &binds) else { return nil }
            return "(\(a) AND \(b))"
        case let .or(a, b):
            guard let a = condition(a, comparisons: comparisons, &binds), let b = condition(b, comparisons: comparisons, &binds) else { return nil }
            return "(\(a) OR \(b))"
        }
    }

    /// The class of a (converted) operand and its comparable form: `numeric` digits, or hex.
    private static func operandParts(_ value: AttributeValue, _ rules: AttributeComparison) -> (kind: Int, key: String)? {
        switch value {
        case .null: nil
        case let .integer(number): (1, String(number))
        case let .real(number): number.isNaN ? nil : (1, decimal(number))
        case let .text(text): (2, hex(rules.collationKey(text)))
        case let .blob(data): (3, hex(Array(data)))
        }
    }

    private static func compare(_ key: String, _ comparison: SearchFilter.Comparison, _ value: AttributeValue,
                                _ rules: AttributeComparison, _ binds: inout SQLBinds) -> String {
        // A comparison with NULL is never true, nor is its NOT.
        guard let (kind, operand) = operandParts(value, rules) else { return "(NULL::boolean)" }
        let op = comparison == .notEqual ? "<>" : comparison.rawValue
        let v = "d.attributes->\(binds.add(key))"
        let typed = kind == 1 ? "(\(v)->1)::numeric \(op) \(binds.add(operand))::numeric" : "(\(v)->>1) COLLATE \"C\" \(op) \(binds.add(operand))"
        return "(CASE WHEN \(v) IS NULL THEN NULL WHEN (\(v)->>0)::int <> \(kind) THEN (\(v)->>0)::int \(op) \(kind) ELSE \(typed) END)"
    }

    private static func oneOf(_ key: String, _ values: [AttributeValue], _ rules: AttributeComparison, _ binds: inout SQLBinds) -> String {
        var byKind: [Int: [String]] = [:]
        var hasNull = false
        for value in values {
            if let (kind, operand) = operandParts(value, rules) { byKind[kind, default: []].append(operand) } else { hasNull = true }
        }
        let v = "d.attributes->\(binds.add(key))"
        var cases: [String] = []
        for kind in byKind.keys.sorted() {
            let list = binds.add(byKind[kind]!)
            cases.append(kind == 1 ? "WHEN 1 THEN (\(v)->1)::numeric = ANY(\(list)::numeric[])" : "WHEN \(kind) THEN (\(v)->>1) COLLATE \"C\" = ANY(\(list)::text[])")
        }
        let match = cases.isEmpty ? "false" : "CASE (\(v)->>0)::int \(cases.joined(separator: " ")) ELSE false END"
        // `x IN (…, NULL)` is NULL, not false, when nothing else is equal.
        return "(CASE WHEN \(v) IS NULL THEN NULL ELSE (\(match))\(hasNull ? " OR NULL" : "") END)"
    }
}
