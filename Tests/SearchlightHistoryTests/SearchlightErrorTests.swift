import GRDB
import Testing
@testable import SearchlightHistory

/// What SQLite's refusals to open read as: a file that cannot be opened at all is not said to be
/// refused "for writing" (an outsider's unreadable tenant file read so).
@Suite struct SearchlightErrorTests {
    @Test func aFileThatCannotBeOpenedIsNotSaidToBeReadOnly() {
        for code in [ResultCode.SQLITE_CANTOPEN, .SQLITE_PERM] {
            let error = SearchlightError(wrapping: DatabaseError(resultCode: code, message: "unable to open database file"), doing: "cannot open database at t.sqlite")
            #expect(error.code == .readOnly)
            #expect(!error.message.contains("for writing"), "\(error.message)")
            #expect(error.message.contains("cannot be opened (unable to open database file)"), "\(error.message)")
        }
        let readOnly = SearchlightError(wrapping: DatabaseError(resultCode: .SQLITE_READONLY, message: "attempt to write a readonly database"), doing: "x")
        #expect(readOnly.message.contains("cannot be opened for writing"))
    }
}
