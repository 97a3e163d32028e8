import Foundation
import GRDB
import Testing
@testable import SearchlightHistory
import SearchlightTestSupport

@Suite struct CaptureStatusTests {
    @Test func aStateOfANewerReleaseDecodesAsUnknownNeverAsCapturing() throws {
        let state = try JSONDecoder().decode(CaptureStatus.State.self, from: Data(#"{"kind": "paused", "until": 42}"#.utf8))
        #expect(state == .unknown("paused"))
        #expect(state.description.contains("\"paused\" is unknown to this release"), "\(state)")
        #expect(try JSONDecoder().decode(CaptureStatus.State.self, from: Data(#"{"kind": "capturing"}"#.utf8)) == .capturing)
        #expect(try JSONDecoder().decode(CaptureStatus.State.self, from: JSONEncoder().encode(state)) == state, "it keeps its kind when stored again")
    }

    @Test func statusReportsAnUnknownStateAsNotCapturing() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        #expect(try store.healCapture().notCapturing.isEmpty)
        // What a newer release could store: a state this one does not know.
        try db.shell(#"""
            UPDATE searchlight_meta SET value = replace(value, '{"kind":"capturing"}', '{"kind":"paused"}')
            WHERE key = 'captureStatus';
            """#)
        let status = try store.healCapture()
        #expect(status.entities.map(\.state) == [.unknown("paused"), .unknown("paused")], "\(status)")
        #expect(status.notCapturing.map(\.name) == ["Note", "Person"])
    }

    @Test func aStatusThatCannotBeReadIsAnErrorNotAnEmptyStatus() throws {
        let db = try TestDatabase()
        let store = try db.openStore()
        // A followed rename of a kind this release does not know, then plain damage.
        for stored in [#"'{"entities":[],"followed":[{"entity":"Note","kind":"index","from":"a","to":"b","date":0}]}'"#, "'{'"] {
            try db.shell("UPDATE searchlight_meta SET value = \(stored) WHERE key = 'captureStatus';")
            let error = #expect(throws: SearchlightError.self) { try store.healCapture() }
            #expect(error?.code == .schemaMismatch)
            #expect(error?.message == "the stored capture status cannot be read (a newer release of Searchlight may have written it: upgrade Searchlight)")
        }
    }
}
