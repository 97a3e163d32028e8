import Foundation
import GRDB

/// The one error type of Searchlight: every public throwing API of `SearchlightHistory` and
/// `Searchlight` throws it.
///
/// Every error has a stable ``code`` (for programs and exit-code mapping), a one-line
/// ``message`` written for people, and the error behind it, if any, as ``underlyingError``
/// (a GRDB `DatabaseError` when SQLite reported the problem).
///
/// Match it the way GRDB's `DatabaseError` matches a `ResultCode`:
///
/// ```swift
/// do {
///     let transactions = try store.fetchTransactions(.after(checkpoint))
/// } catch SearchlightError.historyExpired {
///     // Cleanup deleted history this consumer had not processed: resynchronize from scratch.
/// } catch let error as SearchlightError where error.code == .readOnly {
///     print(error.message)
/// }
/// ```
public struct SearchlightError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// A stable identifier of the kind of failure. Its raw value is what the CLI prints in
    /// JSON and what scripts may match on; it never changes once released.
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
        /// The database, or its directory, cannot be written (or opened at all: SQLite says
        /// "unable to open database file" for both).
        public static let readOnly = Code(rawValue: "read-only")
        /// The database has no Searchlight setup and no model was given, or Searchlight was
        /// uninstalled (and perhaps set up again) after the store opened the database.
        public static let notInstalled = Code(rawValue: "not-installed")
        /// History after the requested point was deleted by cleanup: the consumer must resynchronize.
        public static let historyExpired = Code(rawValue: "history-expired")
        /// A token that does not exist yet (from the future) or is negative.
        public static let invalidToken = Code(rawValue: "invalid-token")
        /// An argument is out of range (negative limit, empty author name, unparsable id…).
        public static let invalidArgument = Code(rawValue: "invalid-argument")
        /// A search filter that does not parse, or names an attribute no searched entity
        /// declares (the message gives the position and what was expected, or the attributes).
        public static let invalidFilter = Code(rawValue: "invalid-filter")
        /// An entity name that the model does not declare.
        public static let unknownEntity = Code(rawValue: "unknown-entity")
        /// A raw FTS5 query has a syntax error (the message names it).
        public static let invalidQuery = Code(rawValue: "invalid-query")
        /// The index has not been built yet.
        public static let indexNotBuilt = Code(rawValue: "index-not-built")
        /// The task was cancelled; work committed before the cancellation stays committed.
        public static let cancelled = Code(rawValue: "cancelled")
        /// A bounded wait ended before what it waited for happened (the work goes on).
        public static let timedOut = Code(rawValue: "timed-out")
        /// A closure you passed (the body of a write or of a consumer) threw; its error is
        /// the ``SearchlightError/underlyingError``, and the transaction was rolled back.
        public static let bodyFailed = Code(rawValue: "body-failed")
        /// The database file was replaced (moved over, or deleted) after the store opened it:
        /// the store still reads the old file. Open the store again.
        public static let databaseReplaced = Code(rawValue: "database-replaced")
        /// Any other SQLite failure; see ``SearchlightError/underlyingError``.
        public static let databaseError = Code(rawValue: "database-error")

        /// `catch SearchlightError.historyExpired { … }`
        public static func ~= (pattern: Code, error: any Error) -> Bool {
            (error as? SearchlightError)?.code == pattern
        }

        /// `case SearchlightError.historyExpired:` on a typed `SearchlightError`.
        public static func ~= (pattern: Code, error: SearchlightError) -> Bool {
            error.code == pattern
        }
    }

    public let code: Code
    public let message: String
    /// The error behind this one: a GRDB `DatabaseError` when SQLite reported the problem,
    /// the error a closure of yours threw (``Code-swift.struct/bodyFailed``), or `nil`.
    public let underlyingError: (any Error)?

    public init(_ code: Code, _ message: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlyingError = underlyingError
    }

    /// Wraps any error into a `SearchlightError` that says what was being done: SQLite's
    /// result codes map to ``Code-swift.struct/notADatabase``, ``Code-swift.struct/readOnly``
    /// or ``Code-swift.struct/databaseError``; a `SearchlightError` is returned as it is.
    package init(wrapping error: any Error, doing: String) {
        switch error {
        case let error as SearchlightError:
            self = error
        case is CancellationError:
            self.init(.cancelled, "\(doing): cancelled", underlyingError: error)
        case let dbError as DatabaseError:
            switch dbError.resultCode {
            case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                self.init(.notADatabase, "\(doing): the file is not an SQLite database or is corrupt", underlyingError: dbError)
            case .SQLITE_READONLY:
                self.init(.readOnly, "\(doing): the database cannot be opened for writing (\(dbError.message ?? "read-only"))", underlyingError: dbError)
            case .SQLITE_CANTOPEN, .SQLITE_PERM:
                // Not only writing: a file this user may not read, or a folder where SQLite may not
                // make its -wal and -shm files, is refused the same way.
                self.init(.readOnly, "\(doing): the database cannot be opened (\(dbError.message ?? "unable to open database file")): this user must be able to read and write it and its folder", underlyingError: dbError)
            default:
                self.init(.databaseError, "\(doing): \(dbError.message ?? "\(dbError.resultCode)")", underlyingError: dbError)
            }
        default:
            self.init(.databaseError, "\(doing): \(error)", underlyingError: error)
        }
    }

    /// Wraps an error thrown around a closure of yours (the body of a write or of a consumer, a
    /// document builder): SQLite's errors, cancellation and `SearchlightError`s are wrapped as by
    /// ``init(wrapping:doing:)``; any other error is the closure's own, under
    /// ``Code-swift.struct/bodyFailed``, with it as the ``underlyingError``.
    package init(wrappingClosureError error: any Error, doing: String) {
        switch error {
        case is SearchlightError, is DatabaseError, is CancellationError:
            self.init(wrapping: error, doing: doing)
        default:
            self.init(.bodyFailed, "\(doing): \(error)", underlyingError: error)
        }
    }

    /// The SQLite error behind this one, if SQLite reported the problem.
    public var databaseError: DatabaseError? { underlyingError as? DatabaseError }

    public var description: String { message }
    public var errorDescription: String? { message }
}

extension SearchlightError {
    public static let invalidModel = Code.invalidModel
    public static let schemaMismatch = Code.schemaMismatch
    public static let databaseNotFound = Code.databaseNotFound
    public static let notADatabase = Code.notADatabase
    public static let readOnly = Code.readOnly
    public static let notInstalled = Code.notInstalled
    public static let historyExpired = Code.historyExpired
    public static let invalidToken = Code.invalidToken
    public static let invalidArgument = Code.invalidArgument
    public static let invalidFilter = Code.invalidFilter
    public static let unknownEntity = Code.unknownEntity
    public static let invalidQuery = Code.invalidQuery
    public static let indexNotBuilt = Code.indexNotBuilt
    public static let cancelled = Code.cancelled
    public static let timedOut = Code.timedOut
    public static let bodyFailed = Code.bodyFailed
    public static let databaseReplaced = Code.databaseReplaced
    public static let databaseError = Code.databaseError
}

extension SearchlightError {
    /// Runs `body`, converting any thrown error into a `SearchlightError` that says what was
    /// being done (``init(wrapping:doing:)``). The one helper of the package's libraries for it.
    package static func catching<T>(_ doing: @autoclosure () -> String, _ body: () throws -> T) throws(SearchlightError) -> T {
        do { return try body() } catch { throw SearchlightError(wrapping: error, doing: doing()) }
    }

    /// Like ``catching(_:_:)``, for work that runs closures of the caller (document builders,
    /// a consumer's body): an error of theirs becomes ``Code-swift.struct/bodyFailed`` with it as
    /// the cause (``init(wrappingClosureError:doing:)``).
    package static func catchingCallbacks<T>(_ doing: @autoclosure () -> String, _ body: () throws -> T) throws(SearchlightError) -> T {
        do { return try body() } catch { throw SearchlightError(wrappingClosureError: error, doing: doing()) }
    }
}
