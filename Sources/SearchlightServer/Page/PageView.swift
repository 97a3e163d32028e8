import Foundation
import Searchlight

/// The parts of a search's JSON page (local or PostgreSQL) that the page shows, read back
/// from the JSON that the API would send, so that both engines render alike.
struct PageView: Decodable, Sendable {
    struct Hit: Decodable, Sendable {
        var source: String?
        var entity: String
        var id: AttributeValue
        var title: String?
        var titleHighlight: String?
        var snippet: String
    }

    var total: Int
    var totalRelation: String
    var countsByEntity: [String: Int]
    var countsBySource: [String: Int]?
    var hits: [Hit]
    var explanation: SearchExplanation?
    var corrections: [SearchCorrection]
    var facets: [SearchFacet]?

    /// "1,234", or "10,000+" when counting stopped at its bound.
    static func count(_ total: Int, atLeast: Bool) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.locale = Locale(identifier: "en_US")
        return (formatter.string(from: NSNumber(value: total)) ?? String(total)) + (atLeast ? "+" : "")
    }

    /// An id as the page shows it.
    static func shown(_ id: AttributeValue) -> String {
        switch id {
        case let .text(text): text
        case .null: "null"
        default: id.description
        }
    }
}
