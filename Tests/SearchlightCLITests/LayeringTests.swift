import Foundation
import Testing

/// Layers import one way (history ← index/search ← CLI), and each uses only the public API of
/// the layer below: SwiftPM's `package` access lets any target of the package see History's
/// internals, so this reads the sources to keep it so.
@Suite struct LayeringTests {
    /// The only `package` types other layers may use: identifier and literal quoting, and user
    /// text quoted in a message (`UserText`, so that every message escapes it one way), and a flag
    /// set from any thread (`AtomicFlag`), and the one boundary to a thread for blocking work
    /// (`DedicatedThread`). The
    /// `package` members they use: `SearchlightError`'s initializers that map GRDB's errors to
    /// its codes, and `Duration.seconds`, so that each is written once.
    static let allowed: Set<String> = ["SQLQuoting", "UserText", "AtomicFlag", "DedicatedThread"]

    static func swiftFiles(under folder: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "swift" }
    }

    /// Names of the `package` types and members declared in a library (SearchlightHistory by default).
    static func packageSymbols(of library: String = "SearchlightHistory") throws -> Set<String> {
        let declaration = try Regex(#"package\s+(?:static\s+)?(?:final\s+)?(?:enum|struct|class|func|var|let|typealias)\s+(\w+)"#)
        var names = Set<String>()
        for file in swiftFiles(under: SecurityTests.sources.appendingPathComponent(library)) {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: declaration) { if let name = match.output[1].substring { names.insert(String(name)) } }
        }
        return names
    }

    @Test func otherLayersUseOnlyThePublicAPIOfSearchlightHistory() throws {
        let symbols = try Self.packageSymbols()
        #expect(symbols.contains("HistoryLog") && symbols.contains("Meta"), "the scan finds History's internals")
        // Type names are distinctive; member names (get, set, all…) are checked where they are
        // called on History's types, which the type names already catch.
        let types = symbols.filter { $0.first?.isUppercase == true }.subtracting(Self.allowed)
        var violations: [String] = []
        for folder in ["Searchlight", "SearchlightCLI", "SearchlightDemoData", "searchlight-bench",
                       "SearchlightPostgres", "SearchlightPostgresCLI", "SearchlightCommandSupport", "SearchlightServer",
                       "SearchlightPostgresServer", "SearchlightServeCommand"] {
            for file in Self.swiftFiles(under: SecurityTests.sources.appendingPathComponent(folder)) {
                let text = try String(contentsOf: file, encoding: .utf8)
                for name in types where text.contains(try Regex("\\b\(name)\\b")) {
                    violations.append("\(folder)/\(file.lastPathComponent) uses \(name)")
                }
            }
        }
        #expect(violations.isEmpty, "\(violations)")
    }

    /// The sinks and the HTTP API sit above index and search: they use only Searchlight's public API too.
    @Test func sinksUseOnlyThePublicAPIOfSearchlight() throws {
        let symbols = try Self.packageSymbols(of: "Searchlight")
        #expect(symbols.contains("IndexedText") && symbols.contains("DocumentSource"), "the scan finds Searchlight's internals")
        // Nested types with common names (`Parsed.Term`, `…Key`, `…Counts`) are reachable only
        // through their parent, which is checked; a public `SearchQuery.Term` shares one name, and
        // `PostgresNeighbourhood.Match` one with `TermNeighbourhood.Match`.
        let types = symbols.filter { $0.first?.isUppercase == true }.subtracting(["Term", "Key", "Counts", "Match"])
        var violations: [String] = []
        for folder in ["SearchlightPostgres", "SearchlightPostgresCLI", "SearchlightServer", "SearchlightPostgresServer", "SearchlightServeCommand"] {
            for file in Self.swiftFiles(under: SecurityTests.sources.appendingPathComponent(folder)) {
                let text = try String(contentsOf: file, encoding: .utf8)
                for name in types where text.contains(try Regex("\\b\(name)\\b")) {
                    violations.append("\(folder)/\(file.lastPathComponent) uses \(name)")
                }
            }
        }
        #expect(violations.isEmpty, "\(violations)")
    }

    @Test func theCommandsHoldNoSQL() throws {
        let sql = try Regex(#"\b(SELECT|INSERT INTO|UPDATE \S+ SET|DELETE FROM|CREATE TABLE)\b"#)
        for folder in ["SearchlightCLI", "SearchlightPostgresCLI", "SearchlightCommandSupport", "SearchlightServer", "SearchlightPostgresServer", "SearchlightServeCommand"] {
            let offenders = try Self.swiftFiles(under: SecurityTests.sources.appendingPathComponent(folder))
                .filter { try String(contentsOf: $0, encoding: .utf8).contains(sql) }.map(\.lastPathComponent)
            #expect(offenders.isEmpty, "\(folder): \(offenders)")
        }
    }
}
