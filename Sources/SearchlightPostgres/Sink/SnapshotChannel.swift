import Dispatch
import SearchlightHistory

/// Hands elements from a synchronous producer (a thread inside an SQLite read transaction) to
/// an async consumer (a `COPY` into PostgreSQL), at most `capacity` at a time: the producer
/// blocks until the consumer has taken enough, so memory holds a few chunks whatever the size
/// of the table.
final class SnapshotChannel<Element: Sendable>: Sendable {
    struct Cancelled: Error {}

    private let stream: AsyncStream<Element>
    private let continuation: AsyncStream<Element>.Continuation
    private let credits: DispatchSemaphore
    private let cancelled = AtomicFlag()
    private let capacity: Int

    init(capacity: Int = 2) {
        (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        credits = DispatchSemaphore(value: capacity)
        self.capacity = capacity
    }

    /// Producer: waits for room, then sends. Throws `Cancelled` once the consumer gave up.
    func send(_ element: Element) throws {
        credits.wait()
        if cancelled.isSet { credits.signal(); throw Cancelled() }
        continuation.yield(element)
    }

    /// Producer: no more elements.
    func finish() { continuation.finish() }

    /// Consumer: the elements, each followed by ``consumed()`` once it is processed.
    var elements: AsyncStream<Element> { stream }

    /// Consumer: one element is processed; the producer may send another.
    func consumed() { credits.signal() }

    /// Consumer: stops the producer (its next ``send(_:)`` throws).
    func cancel() {
        cancelled.set()
        continuation.finish()
        for _ in 0..<capacity { credits.signal() }
    }
}
