import Synchronization

/// A flag set once and read from any thread (a stop or cancellation request, a connection handed
/// out): the package's one such type.
package final class AtomicFlag: Sendable {
    private let value = Atomic(false)

    package init() {}

    /// Sets the flag; it stays set.
    package func set() { value.store(true, ordering: .releasing) }

    /// Whether ``set()`` was called.
    package var isSet: Bool { value.load(ordering: .acquiring) }
}
