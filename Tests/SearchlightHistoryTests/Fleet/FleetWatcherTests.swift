import Foundation
import Testing
@testable import SearchlightHistory

/// The folder stamp that lets the watcher skip a periodic rescan: it must change whenever the
/// folder's membership may have (an entry created, deleted, renamed, or a file moved over
/// another), and a fresh one is not trusted.
@Suite struct FleetWatcherTests {
    @Test func theFolderStampChangesWithEveryChangeOfMembership() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("searchlight-stamp-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func stamp() throws -> FleetWatcher.FolderStamp { try #require(FleetWatcher.FolderStamp(directory)) }
        /// Waits until the clock has moved past the stamp's time, so that a change shows.
        func afterATick(_ change: () throws -> Void) throws -> Bool {
            let before = try stamp()
            let start = Date()
            while Date().timeIntervalSince(start) < 0.05 { usleep(5_000) }
            try change()
            return try stamp() != before
        }
        let a = directory + "/a.sqlite", b = directory + "/b.sqlite"
        #expect(try afterATick { FileManager.default.createFile(atPath: a, contents: Data("x".utf8)) }, "created")
        #expect(try afterATick { try FileManager.default.moveItem(atPath: a, toPath: b) }, "renamed")
        FileManager.default.createFile(atPath: a, contents: Data("y".utf8))
        #expect(try afterATick { _ = rename(a, b) }, "moved over another")
        #expect(try afterATick { try FileManager.default.removeItem(atPath: b) }, "deleted")
        FileManager.default.createFile(atPath: a, contents: Data())
        #expect(try !afterATick {
            let handle = try #require(FileHandle(forWritingAtPath: a))
            try handle.write(contentsOf: Data("a write is no change of membership".utf8))
            try handle.close()
        }, "written")
        #expect(!(try stamp()).isSettled, "a stamp made now is not trusted yet")
        #expect(FleetWatcher.FolderStamp(directory + "/missing") == nil)
    }
}
