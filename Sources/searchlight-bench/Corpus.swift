import Foundation

/// A document of a benchmark corpus: `{"id", "title", "body"}` per line.
struct Document: Decodable, Sendable {
    var id: String
    var title: String
    var body: String
}

enum Corpus {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Reads JSON lines, gunzipping `.gz` files with the system `gzip`.
    static func load(_ path: String, limit: Int?) throws -> [Document] {
        guard FileManager.default.fileExists(atPath: path) else { throw Failure(description: "no corpus at \(path)") }
        let data: Data
        if path.hasSuffix(".gz") {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["gzip", "-dc", path]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw Failure(description: "gzip could not read \(path)") }
        } else {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        }
        let decoder = JSONDecoder()
        var documents: [Document] = []
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            documents.append(try decoder.decode(Document.self, from: line))
            if let limit, documents.count >= limit { break }
        }
        return documents
    }
}
