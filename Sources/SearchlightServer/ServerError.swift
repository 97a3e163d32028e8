import Foundation
import HTTPTypes
import SearchlightHistory

/// An error the HTTP API answers with, as JSON: `{ "code": "invalid-filter", "message": "…" }`,
/// one line, the caller's text escaped. 4xx for the caller's mistakes, 5xx only for ours.
struct ServerError: Error, Sendable {
    struct Code: RawRepresentable, Hashable, Sendable {
        var rawValue: String
        static let unauthorized = Code(rawValue: "unauthorized")
        static let forbidden = Code(rawValue: "forbidden")
        static let notFound = Code(rawValue: "not-found")
        static let busy = Code(rawValue: "busy")
        static let internalError = Code(rawValue: "internal")
    }

    var status: HTTPResponse.Status
    var code: String
    var message: String
    var retryAfter: Int?

    init(_ code: Code, _ message: String, retryAfter: Int? = nil) {
        switch code {
        case .unauthorized: status = .unauthorized
        case .forbidden: status = .forbidden
        case .notFound: status = .notFound
        case .busy: status = .serviceUnavailable
        default: status = .internalServerError
        }
        self.code = code.rawValue
        self.message = message
        self.retryAfter = retryAfter
    }

    init(status: HTTPResponse.Status, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// A library error: the caller's mistakes are 400, an index that is not there yet 503.
    init(_ error: SearchlightError) {
        switch error.code {
        case .invalidArgument, .invalidFilter, .invalidQuery, .unknownEntity: status = .badRequest
        case .indexNotBuilt, .notInstalled, .timedOut, .databaseNotFound: status = .serviceUnavailable
        default: status = .internalServerError
        }
        code = error.code.rawValue
        message = error.message
    }

    struct Body: Encodable {
        var code: String
        var message: String
    }
}
