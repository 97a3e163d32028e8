/// User text as an error message quotes it: on one line, and unable to rewrite a terminal.
///
/// Every message that quotes something a person or a program typed (a query, a filter, an
/// entity or column name, a consumer's name) quotes it through ``shown(_:limit:)``: line breaks,
/// tabs and every other control character (`ESC`, `\v`, the C1 controls), the Unicode line and
/// paragraph separators and the bidirectional overrides are escaped (`\n`, `\u{1b}`), and long
/// text is cut with `…`.
package enum UserText {
    /// `text` escaped for a one-line message, at most `limit` characters of it.
    package static func shown(_ text: String, limit: Int = 40) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit { return result + "…" }
            count += 1
            switch scalar {
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if isUnsafe(scalar) {
                    result += "\\u{" + String(scalar.value, radix: 16) + "}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    /// Escapes the unsafe characters of a whole message (no cut): the last defence of a
    /// command's one-line error.
    package static func oneLine(_ message: String) -> String {
        shown(message, limit: .max)
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: return true
        default: break
        }
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true // bidirectional controls
        default: return false
        }
    }
}
