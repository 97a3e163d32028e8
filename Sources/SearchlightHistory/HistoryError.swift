import Foundation
import GRDB

/// The one error type of the `SearchlightHistory` module.
///
/// Every error has a stable ``code`` (for programs and exit-code mapping) and a one-line
/// ``message`` written for people. When SQLite reported the problem, the original
/// `DatabaseError` is kept as ``underlyingError``.
///
/// ```swift
/// do {
///     let transactions = try store.fetchTransactions(.after(checkpoint))
/// } catch let error as HistoryError where error.code == .historyExpired {
///     // Cleanup deleted history this consumer had not processed: resynchronize from scratch.
/// }
/// ```
public struct HistoryError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// A stable identifier of the kind of failure.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The model file or model value is malformed (bad JSON, wrong types, duplicates…).
        public static let invalidModel = Code(rawValue: "invalid-model")
        /// The model does not match the database (unknown table or column, unsupported key…).
        public static let schemaMismatch = Code(rawValue: "schema-mismatch")
        /// The database file does not exist.
        public static let databaseNotFound = Code(rawValue: "database-not-found")
        /// The file is not an SQLite database, or it is corrupt.
        public static let notADatabase = Code(rawValue: "not-a-database")
        /// The database, or its directory, cannot be written.
        public static let readOnly = Code(rawValue: "read-only")
        /// The database has no Searchlight setup and no model was given.
        public static let notInstalled = Code(rawValue: "not-installed")
        /// History after the requested point was deleted by cleanup: the consumer must resynchronize.
        public static let historyExpired = Code(rawValue: "history-expired")
        /// A token that does not exist yet (from the future) or is negative.
        public static let invalidToken = Code(rawValue: "invalid-token")
        /// An argument is out of range (negative limit, empty author name, unknown entity…).
        public static let invalidArgument = Code(rawValue: "invalid-argument")
        /// Any other SQLite failure; see ``HistoryError/underlyingError``.
        public static let databaseError = Code(rawValue: "database-error")
    }

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

    /// Wraps any error thrown while talking to SQLite into a `HistoryError`, keeping the cause.
    package static func wrap(_ error: any Error, _ doing: String) -> HistoryError {
        if let error = error as? HistoryError { return error }
        guard let dbError = error as? DatabaseError else {
            return HistoryError(.databaseError, "\(doing): \(error)")
        }
        switch dbError.resultCode {
        case .SQLITE_NOTADB, .SQLITE_CORRUPT:
            return HistoryError(.notADatabase, "\(doing): the file is not an SQLite database or is corrupt", underlyingError: dbError)
        case .SQLITE_READONLY, .SQLITE_CANTOPEN, .SQLITE_PERM:
            return HistoryError(.readOnly, "\(doing): the database cannot be opened for writing (\(dbError.message ?? "read-only"))", underlyingError: dbError)
        default:
            return HistoryError(.databaseError, "\(doing): \(dbError.message ?? "\(dbError.resultCode)")", underlyingError: dbError)
        }
    }
}

extension HistoryError {
    /// Runs `body`, converting any thrown error into a `HistoryError` that says what was being done.
    package static func catching<T>(_ doing: @autoclosure () -> String, _ body: () throws -> T) throws(HistoryError) -> T {
        do { return try body() } catch { throw wrap(error, doing()) }
    }
}
