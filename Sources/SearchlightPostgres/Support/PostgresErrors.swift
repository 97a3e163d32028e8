import Foundation
import GRDB
import NIOCore
import NIOPosix
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

    /// Whether `error` may go away by itself, so that trying again later can succeed: decided by
    /// kinds, never by a message's text.
    ///
    /// - A server error by its SQLSTATE: class `08` (connection exception), `53` (insufficient
    ///   resources: too many connections, out of memory, disk full), `58` (system error), `40001`
    ///   and `40P01` (serialization failure, deadlock), `55P03` (lock not available), `57014`
    ///   (query cancelled) and `57P01` to `57P05` (the server shutting down, crashed, starting up,
    ///   or the connection idle too long). Any other (`28` a role or password refused, `3D000` no
    ///   such database, `42` a statement or object the server does not know…) is for a person to fix.
    /// - postgres-nio's own codes: the connection failed, closed or was cut uncleanly, a query
    ///   was cancelled, the pool closed, or a message that made no sense (a server that crashed
    ///   mid-reply); not TLS or authentication refused by the client library.
    /// - NIO's channel errors (`ChannelError`, `IOError`, `NIOConnectionError`: refused,
    ///   reset, timed out, unreachable).
    /// - A ``SearchlightError`` by what it wraps (nothing wrapped: not transient).
    static func isTransient(_ error: any Error) -> Bool {
        switch error {
        case let error as SearchlightError:
            return error.underlyingError.map(isTransient) ?? false
        case let error as PSQLError:
            if let state = error.serverInfo?[.sqlState] { return isTransient(sqlState: state) }
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .queryCancelled, .poolClosed,
                 .messageDecodingFailure, .unexpectedBackendMessage:
                return true
            default:
                return error.underlying.map(isTransient) ?? false
            }
        case let error as ChannelError:
            switch error {
            case .connectTimeout, .ioOnClosedChannel, .alreadyClosed, .outputClosed, .inputClosed, .eof, .writeHostUnreachable: return true
            default: return false
            }
        case is IOError, is NIOConnectionError, is ConnectionUnavailable, is ConnectionClosed, is CommitOutcomeUnknown, is NoAnswer, is StepStalled:
            return true
        default:
            return false
        }
    }

    /// ``isTransient(_:)`` for a server error's SQLSTATE.
    static func isTransient(sqlState state: String) -> Bool {
        if state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("58") { return true }
        return ["40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03", "57P04", "57P05"].contains(state)
    }
}
