import SearchlightHistory

/// The indexer as a consumer of the runtime: ``start()`` and ``run()`` drive it with a
/// ``SearchlightHistory/HistoryFollower``, which owns waking (commit notifications, a fallback
/// poll), backoff between failed steps, cancellation and the thread boundary.
extension Indexer: LocalHistoryConsumer {
    /// The indexer's author name in history and checkpoints (``Configuration/author``).
    public var author: String { configuration.author }

    /// One step of following, in the runner's dedicated thread: the next batch of history,
    /// indexed in one write transaction with the indexer's checkpoint; or, when the index needs
    /// one (``RebuildReason``), a rebuild, one write transaction per chunk, which stops between
    /// chunks once `shouldStop` says so (it resumes where it stopped on the next step). Each
    /// committed batch or rebuild is published to ``updates()``.
    ///
    /// `store` must be the indexer's own ``store``.
    ///
    /// - Returns: ``SearchlightHistory/HistoryStep/caughtUp`` when nothing followed the checkpoint.
    /// - Throws: ``SearchlightError/Code-swift.struct/cancelled`` when stopped mid-rebuild; a
    ///   failure of the batch or rebuild, also thrown by a ``waitUntilCaughtUp()`` under way.
    public func step(_ store: HistoryStore, shouldStop: @escaping @Sendable () -> Bool) throws -> HistoryStep {
        guard store === self.store else {
            throw SearchlightError(.invalidArgument, "an indexer follows the history of its own store")
        }
        return try followingStep(until: shouldStop)
    }

    /// Only two failures end following: the database file was replaced
    /// (``SearchlightError/Code-swift.struct/databaseReplaced``) or Searchlight was uninstalled
    /// (``SearchlightError/Code-swift.struct/notInstalled``). Every other failure of a step (a
    /// lock held too long, a full disk, a ``DocumentBuilder`` that threw) is retried with
    /// backoff: it may clear, and the index must not stop following for it.
    public func classify(_ error: any Error) -> HistoryFailure {
        Self.classify(error)
    }

    static func classify(_ error: any Error) -> HistoryFailure {
        switch (error as? SearchlightError)?.code {
        case .databaseReplaced?, .notInstalled?: .permanent
        default: .transient
        }
    }
}

/// The consumer ``Indexer/start()`` runs: the indexer, held weakly between steps, so that an
/// indexer released without ``Indexer/stop()`` is freed and its following ends.
struct FollowingIndexer: LocalHistoryConsumer {
    weak let indexer: Indexer?
    let author: String

    init(_ indexer: Indexer) {
        self.indexer = indexer
        author = indexer.author
    }

    func step(_ store: HistoryStore, shouldStop: @escaping @Sendable () -> Bool) throws -> HistoryStep {
        // The runner ends quietly on a cancellation: nobody follows for a released indexer.
        guard let indexer else { throw CancellationError() }
        return try indexer.step(store, shouldStop: shouldStop)
    }

    func classify(_ error: any Error) -> HistoryFailure {
        Indexer.classify(error)
    }
}
