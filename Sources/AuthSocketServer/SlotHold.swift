import Synchronization

/// A connection's slot, given back exactly once whichever way the connection ends (its task,
/// closing without one, or failing while being set up).
final class SlotHold: Sendable {
    private let held = Atomic<Bool>(true)
    private let giveBack: @Sendable () -> Void

    /// A slot held; `giveBack` returns it to its `ConnectionSlots`.
    init(giveBack: @escaping @Sendable () -> Void) { self.giveBack = giveBack }

    /// Gives the slot back, the first time only.
    func release() {
        if held.exchange(false, ordering: .acquiringAndReleasing) { giveBack() }
    }
}
