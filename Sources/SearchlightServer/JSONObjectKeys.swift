import Foundation

/// Whether a JSON text repeats a key within one object, compared as decoded (`"f\u0069lter"` is
/// `"filter"`). Parsers disagree on which duplicate wins (Foundation keeps the first, Python the
/// last), so a token whose issuer and server could read different claims is refused.
enum JSONObjectKeys {
    /// true if some object repeats a key, false if none does, nil if the text is not JSON.
    static func haveDuplicates(_ data: Data) -> Bool? {
        let bytes = Array(data)
        var position = 0
        var duplicate = false

        func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }
        /// A string literal's decoded text, leaving `position` after its closing quote.
        func string() -> String? {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
            let start = position
            position += 1
            while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
                position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
            }
            guard position < bytes.count else { return nil }
            position += 1
            return try? JSONDecoder().decode(String.self, from: Data(bytes[start..<position]))
        }
        func value(depth: Int) -> Bool {
            guard depth < 64 else { return false }
            skipSpace()
            guard position < bytes.count else { return false }
            switch bytes[position] {
            case UInt8(ascii: "{"):
                position += 1
                var keys = Set<String>()
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return true }
                while true {
                    skipSpace()
                    guard let key = string() else { return false }
                    if !keys.insert(key).inserted { duplicate = true }
                    skipSpace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return false }
                    position += 1
                    guard value(depth: depth + 1) else { return false }
                    skipSpace()
                    guard position < bytes.count else { return false }
                    if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                    if bytes[position] == UInt8(ascii: "}") { position += 1; return true }
                    return false
                }
            case UInt8(ascii: "["):
                position += 1
                skipSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return true }
                while true {
                    guard value(depth: depth + 1) else { return false }
                    skipSpace()
                    guard position < bytes.count else { return false }
                    if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                    if bytes[position] == UInt8(ascii: "]") { position += 1; return true }
                    return false
                }
            case UInt8(ascii: "\""):
                return string() != nil
            default:
                // A number, true, false or null: its bytes up to the next delimiter.
                let start = position
                while position < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) {
                    position += 1
                }
                return position > start
            }
        }
        guard value(depth: 0) else { return nil }
        skipSpace()
        return position == bytes.count ? duplicate : nil
    }
}
