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
