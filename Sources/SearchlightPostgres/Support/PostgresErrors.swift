import Foundation
import GRDB
import PostgresNIO
import SearchlightHistory

extension SearchlightError.Code {
    /// PostgreSQL refused or failed an operation, or could not be reached (the message says
    /// which, with the server's own message and SQLSTATE when it sent one).
    public static let postgresError = SearchlightError.Code(rawValue: "postgres-error")
}

/// Turning postgres-nio's errors into one line for people.
enum PostgresErrors {
    /// The server's message and SQLSTATE, or what went wrong with the connection: postgres-nio's
    /// own description of a `PSQLError` hides both.
    static func describe(_ error: any Error) -> String {
        if let error = error as? SearchlightError { return error.message }
        guard let error = error as? PSQLError else {
            if error is CancellationError { return "cancelled" }
            return "\(error)"
        }
        if let info = error.serverInfo, let message = info[.message] {
            var text = message
            if let detail = info[.detail] { text += " (\(detail))" }
            if let state = info[.sqlState] { text += " [SQLSTATE \(state)]" }
            return text
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }

    /// The SQLSTATE of a server error, if it is one.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// Wraps a PostgreSQL failure as `postgresError`, saying what was being done.
    static func wrap(_ error: any Error, doing: String) -> SearchlightError {
        if let error = error as? SearchlightError { return error }
        if error is CancellationError { return SearchlightError(.cancelled, "\(doing): cancelled", underlyingError: error) }
        // SQLite's errors (from the source database, in the middle of PostgreSQL work) keep their codes.
        if error is DatabaseError { return SearchlightError(wrapping: error, doing: "reading the source database") }
        return SearchlightError(.postgresError, "\(doing): \(describe(error))", underlyingError: error)
    }
}
