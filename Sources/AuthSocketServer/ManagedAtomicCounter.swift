import Synchronization

/// A counter for connection ids.
package final class ManagedAtomicCounter: Sendable {
    private let value = Atomic<UInt64>(0)
    package init() {}
    package func next() -> UInt64 { value.add(1, ordering: .relaxed).newValue }
}
