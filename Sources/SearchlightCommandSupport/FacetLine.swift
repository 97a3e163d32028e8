import Searchlight

/// A facet as the table format prints it, one line: `tag: swift 12, rust 3 (and 4 more values)`.
package enum FacetLine {
    package static func text(_ facet: SearchFacet) -> String {
        let values = facet.buckets.map { bucket -> String in
            let value = if case let .text(text) = bucket.value { text } else { bucket.value.description }
            return "\(value) \(bucket.count)"
        }
        let more = facet.distinctValues - facet.buckets.count
        return "\(facet.attribute): " + (values.isEmpty ? "no values" : values.joined(separator: ", ")) + (more > 0 ? " (and \(more) more values)" : "")
    }
}

/// Corrections as the table format prints them: `Typo matches (after the exact ones): kernal → kernel, vernal (1 typo).`
package enum CorrectionLine {
    package static func text(_ corrections: [SearchCorrection]) -> String {
        "Typo matches (after the exact ones): " + corrections.map { correction in
            let typos = Set(correction.replacements.map(\.typos)).sorted().map(String.init).joined(separator: " or ")
            return "\(correction.word) → \(correction.replacements.map(\.text).joined(separator: ", ")) (\(typos) typo\(typos == "1" ? "" : "s"))"
        }.joined(separator: "; ") + "."
    }
}
