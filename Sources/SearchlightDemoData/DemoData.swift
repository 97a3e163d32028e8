import Foundation

/// The demo data set shipped with Searchlight: The Jargon File 4.4.7 (public domain), one entry
/// per line as JSON (`{"id", "title", "body"}`), 2,307 entries.
public enum DemoData {
    /// One entry of the Jargon File.
    public struct Entry: Decodable, Hashable, Sendable {
        public var id: String
        public var title: String
        public var body: String
    }

    /// The location of `jargon.jsonl` inside the package.
    public static var jargonURL: URL {
        Bundle.module.url(forResource: "jargon", withExtension: "jsonl")!
    }

    /// Every entry, in file order.
    public static func jargon() throws -> [Entry] {
        let data = try Data(contentsOf: jargonURL)
        let decoder = JSONDecoder()
        return try data.split(separator: UInt8(ascii: "\n")).filter { !$0.isEmpty }.map { try decoder.decode(Entry.self, from: $0) }
    }
}
