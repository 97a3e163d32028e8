import Foundation
import SearchlightHistory

/// One measured figure, its baseline, and how they compare.
struct Figure: Codable, Sendable {
    var scenario: String
    var name: String
    var unit: String
    var ours: Double
    var baseline: Double?
    var baselineName: String?
    /// ours / baseline.
    var ratio: Double?
    var target: String?
    var met: Bool?

    init(_ scenario: String, _ name: String, unit: String, ours: Double, baseline: Double? = nil,
         baselineName: String? = nil, target: String? = nil, met: Bool? = nil) {
        self.scenario = scenario
        self.name = name
        self.unit = unit
        self.ours = ours
        self.baseline = baseline
        self.baselineName = baselineName
        self.ratio = baseline.flatMap { $0 == 0 ? nil : ours / $0 } // (JSON has no infinity)
        self.target = target
        self.met = met
    }
}

struct Report: Codable, Sendable {
    var date: String
    var machine: String
    var corpus: String
    var documents: Int
    var figures: [Figure] = []

    func table() -> String {
        func format(_ value: Double) -> String {
            value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
        }
        var lines = ["Searchlight benchmark — \(date) — \(machine) — \(corpus) (\(documents) documents)", ""]
        let header = ["scenario", "figure", "ours", "baseline", "ratio", "target", "met"]
        var rows = [header]
        for f in figures {
            rows.append([
                f.scenario, f.name, "\(format(f.ours)) \(f.unit)",
                f.baseline.map { "\(format($0)) (\(f.baselineName ?? ""))" } ?? "-",
                f.ratio.map { String(format: "%.2fx", $0) } ?? "-",
                f.target ?? "-", f.met.map { $0 ? "yes" : "NO" } ?? "-",
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            lines.append(row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: "  "))
        }
        return lines.joined(separator: "\n")
    }
}

/// Seconds taken by `body`.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    let elapsed = clock.now - start
    return elapsed.seconds
}

/// A fresh directory for one scenario's databases.
func scratchDirectory(_ name: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-bench-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
