import Logging

/// Runs a consumer until its task is cancelled: its backlog first, then each commit as it
/// happens, in this process or another (see ``HistoryStore/historyUpdates()``).
///
/// The runner owns what every consumer needs around its steps:
///
/// - **Waking.** After a step that is ``HistoryStep/caughtUp``, it waits for a commit, or for
///   `pollInterval` at most (a notification lost to a broken file watch delays a batch, never
///   strands it). It subscribes before the first step: no commit after the backlog is missed.
/// - **Retrying.** A step whose error the consumer classifies ``HistoryFailure/transient`` is
///   logged and retried after a ``Backoff`` delay, reset by the next success. A
///   ``HistoryFailure/permanent`` error ends ``run()`` with it.
/// - **Cancellation.** Cancelling the task lets the step in flight end (its transaction
///   commits, or rolls back), then ``run()`` returns normally.
/// - **The thread boundary.** Blocking SQLite work (a ``LocalHistoryConsumer``'s step, an
///   ``ExternalHistoryConsumer``'s fetch and confirmation) runs on a dedicated thread, never
///   in Swift's cooperative pool; the other system's async work runs in the task.
///
/// ```swift
/// let following = Task {
///     try await HistoryFollower(Exporter(), store: store, logger: logger).run()
/// }
/// // … at shutdown:
/// following.cancel()
/// try await following.value
/// ```
public struct HistoryFollower: Sendable {
    /// The store whose history is followed.
    public let store: HistoryStore
    /// The consumer's author name.
    public let author: String
    /// The delays between retries of a failing step.
    public let backoff: Backoff
    /// How long a caught-up runner waits for a commit notification before stepping anyway.
    public let pollInterval: Duration

    private let logger: Logger
    private let step: @Sendable () async throws -> HistoryStep
    private let classify: @Sendable (any Error) -> HistoryFailure
    private let reporting: Reporting?

    /// What a runner says about failed steps, and the error ``run()`` ends with, for a consumer
    /// of this package that keeps lines its operators know (the PostgreSQL sink).
    package struct Reporting: Sendable {
        /// A transient failure, before a wait of `delay`; `failures` in a row.
        package var retrying: @Sendable (_ error: any Error, _ delay: Duration, _ failures: Int) -> Void
        /// The error ``run()`` throws after a permanent failure (the caller reports it).
        package var ending: @Sendable (_ error: any Error) -> SearchlightError

        package init(retrying: @escaping @Sendable (_ error: any Error, _ delay: Duration, _ failures: Int) -> Void,
                     ending: @escaping @Sendable (_ error: any Error) -> SearchlightError) {
            self.retrying = retrying
            self.ending = ending
        }
    }

    /// A runner for a consumer whose work and checkpoint commit in one SQLite transaction.
    ///
    /// - Parameters:
    ///   - logger: where retried errors are logged (warnings); the store's logger if `nil`.
    public init(_ consumer: some LocalHistoryConsumer, store: HistoryStore, backoff: Backoff = Backoff(),
                pollInterval: Duration = .seconds(2), logger: Logger? = nil) {
        let threadName = "searchlight.consumer.\(consumer.author)"
        self.init(author: consumer.author, store: store, backoff: backoff, pollInterval: pollInterval, logger: logger,
                  classify: { consumer.classify($0) }) {
            try await DedicatedThread.run(name: threadName) { shouldStop in try consumer.step(store, shouldStop: shouldStop) }
        }
    }

    /// A runner for a consumer that applies history to another system under that system's
    /// own checkpoint: each step fetches, applies, then confirms (see ``ExternalHistoryConsumer``).
    public init(_ consumer: some ExternalHistoryConsumer, store: HistoryStore, backoff: Backoff = Backoff(),
                pollInterval: Duration = .seconds(2), logger: Logger? = nil) {
        let threadName = "searchlight.consumer.\(consumer.author)"
        self.init(author: consumer.author, store: store, backoff: backoff, pollInterval: pollInterval, logger: logger,
                  classify: { consumer.classify($0) }) {
            let checkpoint = try await consumer.externalCheckpoint()
            let fetched = try await DedicatedThread.run(name: threadName) { _ in try consumer.fetch(after: checkpoint, from: store) }
            guard let pending = fetched else { return .caughtUp }
            try await consumer.apply(pending)
            // Confirmed even if the task is cancelled now: it only follows what is applied.
            try await DedicatedThread.run(name: threadName) { _ throws(SearchlightError) in try pending.confirm(in: store) }
            return .progressed
        }
    }

    /// A runner for a consumer of this package whose step does not fit fetch, apply, confirm:
    /// the PostgreSQL sink, whose step first compares its local checkpoint with PostgreSQL's
    /// (the lineage check) and then applies a batch, adopts a batch PostgreSQL already holds,
    /// or loads a snapshot (a resync). The runner owns waking, retrying and cancellation as for
    /// the public kinds; `step` crosses ``DedicatedThread`` for every blocking SQLite call.
    package init(_ consumer: some HistoryFollowingConsumer, store: HistoryStore, backoff: Backoff, pollInterval: Duration,
                 logger: Logger?, reporting: Reporting?, step: @escaping @Sendable () async throws -> HistoryStep) {
        self.init(author: consumer.author, store: store, backoff: backoff, pollInterval: pollInterval, logger: logger,
                  classify: { consumer.classify($0) }, reporting: reporting, step: step)
    }

    private init(author: String, store: HistoryStore, backoff: Backoff, pollInterval: Duration, logger: Logger?,
                 classify: @escaping @Sendable (any Error) -> HistoryFailure, reporting: Reporting? = nil,
                 step: @escaping @Sendable () async throws -> HistoryStep) {
        self.store = store
        self.author = author
        self.backoff = backoff
        self.pollInterval = pollInterval
        self.logger = logger ?? store.configuration.logger
        self.classify = classify
        self.reporting = reporting
        self.step = step
    }

    /// Follows history until the calling task is cancelled, then returns once the step in
    /// flight has ended.
    ///
    /// - Throws: the first error the consumer classifies as ``HistoryFailure/permanent``, as a
    ///   ``SearchlightError`` (your own errors under ``SearchlightError/Code-swift.struct/bodyFailed``,
    ///   with the error as the cause).
    public func run() async throws(SearchlightError) {
        // Subscribed before the first step: no commit after the backlog is missed.
        let updates = store.historyUpdates()
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let pollInterval = pollInterval
        let forwarder = Task {
            for await _ in updates { wake.yield() }
        }
        let poller = Task {
            while (try? await Task.sleep(for: pollInterval)) != nil { wake.yield() }
        }
        defer {
            forwarder.cancel()
            poller.cancel()
            wake.finish()
        }
        var iterator = wakeups.makeAsyncIterator()
        var backoff = backoff
        while !Task.isCancelled {
            let outcome: HistoryStep
            do {
                outcome = try await step()
            } catch {
                if error is CancellationError || (error as? SearchlightError)?.code == .cancelled { return }
                guard classify(error) == .transient else {
                    if let reporting { throw reporting.ending(error) }
                    let failure = SearchlightError(wrappingClosureError: error, doing: "consumer \"\(author)\" failed")
                    logger.error("\(failure.message); following ends")
                    throw failure
                }
                if Task.isCancelled { return }
                let delay = backoff.next()
                if let reporting {
                    reporting.retrying(error, delay, backoff.failures)
                } else {
                    let failure = SearchlightError(wrappingClosureError: error, doing: "consumer \"\(author)\" failed")
                    logger.warning("\(failure.message); retrying in \(delay) (failure \(backoff.failures))")
                }
                guard (try? await Task.sleep(for: delay)) != nil else { return }
                continue
            }
            if backoff.failures > 0 {
                if reporting == nil { logger.notice("consumer \"\(author)\" recovered after \(backoff.failures) failed steps") }
                backoff.reset()
            }
            if outcome == .caughtUp {
                // nil once the task is cancelled.
                guard await iterator.next() != nil else { return }
            }
        }
    }
}
