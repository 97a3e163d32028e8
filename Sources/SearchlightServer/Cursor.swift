import Foundation

/// The opaque cursor of the next page: its offset, and a fingerprint of the search's other
/// parameters, so that a cursor sent with another search is refused.
struct Cursor {
    var offset: Int
    var fingerprint: UInt64

    init(offset: Int, query: QueryString) {
        self.offset = offset
        fingerprint = Self.fingerprint(query)
    }

    init?(encoded: String) {
        var base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard encoded.count <= 64, let data = Data(base64Encoded: base64) else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(separator: ":")
        guard parts.count == 3, parts[0] == "1", let offset = Int(parts[1]), offset >= 0, let fingerprint = UInt64(parts[2], radix: 16) else { return nil }
        self.offset = offset
        self.fingerprint = fingerprint
    }

    var encoded: String {
        Data("1:\(offset):\(String(fingerprint, radix: 16))".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// FNV-1a of the parameters but `cursor`, in order.
    static func fingerprint(_ query: QueryString) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (name, value) in query.pairs where name != "cursor" {
            for byte in Array(name.utf8) + [0] + Array(value.utf8) + [1] {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
        }
        return hash
    }
}
