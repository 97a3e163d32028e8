import GRDB
import GRDBSQLite

/// A prepared statement stepped through SQLite's C API, for the few loops that run it thousands
/// of times per call (the vocabulary walk's seeks, the vocabulary's upserts): GRDB's
/// `StatementArguments` boxes each value and its statement cache hashes the SQL at every call.
/// Text is bound and read as UTF-8 bytes; the statement is reset after each use, so it holds no
/// read lock between calls.
struct RawStatement {
    private let statement: Statement

    /// Prepares `sql` on `db` (through GRDB's statement cache).
    init(_ sql: String, _ db: Database) throws {
        statement = try db.cachedStatement(sql: sql)
    }

    /// SQLite copies the bound text (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func bind(_ values: [RawValue]) throws {
        sqlite3_reset(statement.sqliteStatement)
        for (offset, value) in values.enumerated() {
            let index = CInt(offset + 1)
            let code: CInt
            switch value {
            case let .text(text):
                var text = text
                code = text.withUTF8 { bindText($0, at: index) }
            case let .utf8(bytes):
                code = bytes.withUnsafeBufferPointer { bindText($0, at: index) }
            case let .integer(integer):
                code = sqlite3_bind_int64(statement.sqliteStatement, index, integer)
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
    }

    /// Binds UTF-8 `bytes` as the text of parameter `index` (SQLite copies them).
    private func bindText(_ bytes: UnsafeBufferPointer<UInt8>, at index: CInt) -> CInt {
        guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement.sqliteStatement, index, "", 0, Self.transient) }
        return sqlite3_bind_text(statement.sqliteStatement, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), CInt(bytes.count), Self.transient)
    }

    /// Steps the bound statement to its end (a row is no error), resets it, and returns the
    /// number of rows it changed.
    private func stepToEnd() throws -> Int {
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code) }
        return Int(sqlite3_changes(sqlite3_db_handle(handle)))
    }

    private func error(_ code: CInt) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code),
                      message: sqlite3_db_handle(statement.sqliteStatement).map { String(cString: sqlite3_errmsg($0)) })
    }

    /// A value to bind.
    enum RawValue {
        case text(String)
        /// Text given as its UTF-8 bytes.
        case utf8([UInt8])
        case integer(Int64)
    }

    /// Runs the statement with `values` and calls `row` with each row's first column as text,
    /// until it returns false.
    func forEachText(_ values: [RawValue], _ row: (UnsafeBufferPointer<UInt8>) throws -> Bool) throws {
        try bind(values)
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code) }
            let count = Int(sqlite3_column_bytes(handle, 0))
            let bytes = sqlite3_column_text(handle, 0)
            guard try row(UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : count)) else { return }
        }
    }

    /// Runs the statement with `values` and returns its first row's columns as text (NULL as
    /// the empty string), nil when it has no row.
    func firstRowText(_ values: [RawValue]) throws -> [String]? {
        try bind(values)
        let handle = statement.sqliteStatement
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else { throw error(code) }
        return (0..<sqlite3_column_count(handle)).map { column in
            guard let text = sqlite3_column_text(handle, column) else { return "" }
            return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
        }
    }

    /// Runs the statement (no rows expected) with ?1 the text `bytes` (UTF-8) and ?2 `integer`;
    /// returns the number of rows it changed. No value is boxed: the vocabulary's flush runs
    /// it once a changed word.
    @discardableResult
    func execute(text bytes: UnsafeBufferPointer<UInt8>, integer: Int64) throws -> Int {
        sqlite3_reset(statement.sqliteStatement)
        var code = bindText(bytes, at: 1)
        if code == SQLITE_OK { code = sqlite3_bind_int64(statement.sqliteStatement, 2, integer) }
        guard code == SQLITE_OK else { throw error(code) }
        return try stepToEnd()
    }

    /// Runs the statement (no rows expected) with `values`; returns the number of rows it
    /// changed (for an INSERT, UPDATE or DELETE).
    @discardableResult
    func execute(_ values: [RawValue]) throws -> Int {
        try bind(values)
        return try stepToEnd()
    }
}
