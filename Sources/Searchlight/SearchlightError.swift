import Foundation
import GRDB
import SearchlightHistory

/// The one error type of the `Searchlight` module (indexing and search).
///
/// Codes are stable strings; errors that come from the history layer keep their
/// ``HistoryError`` code (`history-expired`, `database-not-found`, …).
public struct SearchlightError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// A stable identifier of the kind of failure: one namespace for both modules, so that a
    /// history failure keeps its code (`history-expired`, `database-not-found`, …).
    public typealias Code = HistoryError.Code

    public let code: Code
    public let message: String
    /// The SQLite error behind this one, if any.
    public let underlyingError: DatabaseError?

    public init(_ code: Code, _ message: String, underlyingError: DatabaseError? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlyingError
    }

    public var description: String { message }
    public var errorDescription: String? { message }

    /// Wraps any error into a `SearchlightError` that says what was being done.
    static func wrap(_ error: any Error, _ doing: String) -> SearchlightError {
        switch error {
        case let error as SearchlightError:
            return error
        case let error as HistoryError:
            return SearchlightError(error.code, error.message, underlyingError: error.underlyingError)
        default:
            let history = HistoryError.wrap(error, doing)
            return SearchlightError(history.code, history.message, underlyingError: history.underlyingError)
        }
    }

    /// Runs `body`, converting what it throws.
    static func catching<T>(_ doing: @autoclosure () -> String, _ body: () throws -> T) throws(SearchlightError) -> T {
        do { return try body() } catch { throw wrap(error, doing()) }
    }
}

extension HistoryError.Code {
    /// A raw FTS5 query has a syntax error (the message names it).
    public static let invalidQuery = Self(rawValue: "invalid-query")
    /// An entity name that the model does not declare.
    public static let unknownEntity = Self(rawValue: "unknown-entity")
    /// The index has not been built yet.
    public static let indexNotBuilt = Self(rawValue: "index-not-built")
}
