import Synchronization

/// A counter for connection ids.
package final class ManagedAtomicCounter: Sendable {
    private let value = Atomic<UInt64>(0)
    /// A counter that has given no id yet.
    package init() {}
    /// The next id: 1, then 2, and so on, from any thread.
    package func next() -> UInt64 { value.add(1, ordering: .relaxed).newValue }
}
