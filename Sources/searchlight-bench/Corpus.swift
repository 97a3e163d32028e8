import Foundation

/// A document of a benchmark corpus: `{"id", "title", "body"}` per line.
struct Document: Decodable, Sendable {
    var id: String
    var title: String
    var body: String
}

enum Corpus {
    struct Failure: Error, CustomStringConvertible { var description: String }

    /// Reads JSON lines (gunzipping `.gz` files with the system `gzip`), or a WordNet
    /// directory such as `/usr/share/wordnet` from Debian's `wordnet-base`.
    static func load(_ path: String, limit: Int?) throws -> [Document] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw Failure(description: "no corpus at \(path)") }
        if isDirectory.boolValue { return try wordNet(path, limit: limit) }
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

    /// WordNet 3.0 synsets from `data.noun`, `data.verb`, `data.adj` and `data.adv`: title = the
    /// lemmas, body = the gloss (the same documents as `wordnet.jsonl.gz`).
    static func wordNet(_ directory: String, limit: Int?) throws -> [Document] {
        var documents: [Document] = []
        for (part, letter) in [("noun", "n"), ("verb", "v"), ("adj", "a"), ("adv", "r")] {
            let url = URL(fileURLWithPath: directory).appendingPathComponent("data.\(part)")
            let text = try String(contentsOf: url, encoding: .utf8)
            for line in text.split(separator: "\n") where !line.hasPrefix("  ") {
                let halves = line.split(separator: "|", maxSplits: 1)
                let fields = halves[0].split(separator: " ")
                guard fields.count > 4, let count = Int(fields[3], radix: 16) else { continue }
                let lemmas = (0..<count).compactMap { index -> String? in
                    let position = 4 + index * 2
                    return position < fields.count ? fields[position].replacingOccurrences(of: "_", with: " ") : nil
                }
                let gloss = halves.count > 1 ? halves[1].trimmingCharacters(in: .whitespaces) : ""
                documents.append(Document(id: "wn-\(letter)\(fields[0])", title: lemmas.joined(separator: ", "), body: gloss))
                if let limit, documents.count >= limit { return documents }
            }
        }
        return documents
    }
}
