import Foundation
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// A fleet lets an idle database go by dropping its store and indexer: nothing may keep them.
@Suite struct ReleaseTests {
    @Test func aStoreAndItsIndexerAreFreedOnceDropped() async throws {
        let db = try TestDatabase()
        _ = try db.openStore()
        try db.shell("INSERT INTO notes(id, title) VALUES (1, 'kept');")
        weak var weakStore: HistoryStore?
        weak var weakIndexer: Indexer?
        do {
            let store = try HistoryStore(path: db.path)
            let indexer = try Indexer(store: store)
            _ = try await indexer.indexPendingChanges(maximumBatches: 8)
            weakStore = store
            weakIndexer = indexer
        }
        // The thread that ran the turn lets its closure go a moment after it resumed the caller.
        let deadline = ContinuousClock.now + .seconds(60)
        while weakIndexer != nil || weakStore != nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        #expect(weakIndexer == nil && weakStore == nil)
    }
}
