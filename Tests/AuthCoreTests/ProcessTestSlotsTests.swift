import AuthTestSupport
import Foundation
import Testing

/// The test harness's bound on tests that start processes: a test cancelled while it waits for
/// a slot (its time limit reached) stops waiting at once and takes no slot with it.
@Suite(.timeLimit(.minutes(5))) struct ProcessTestSlotsTests {
    @Test func aCancelledWaiterStopsWaitingAndTheSlotGoesToTheNext() async throws {
        let slots = ProcessTestSlots(count: 1)
        let started = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        try await withThrowingTaskGroup(of: Void.self) { holder in
            holder.addTask { try await slots.run { started.signal(); holding.wait() } }
            try await offPool { started.wait() }
            // The only slot is held: this waits until cancelled, which ends it with CancellationError.
            let waited = await withTaskGroup(of: (any Error)?.self) { waiting in
                waiting.addTask {
                    do { try await slots.run {}; return nil } catch { return error }
                }
                // Cancelled once queued, so that the cancellation handler must take it out.
                #expect(await eventually { slots.waitingCount == 1 })
                waiting.cancelAll()
                return await waiting.next() ?? nil
            }
            #expect(waited is CancellationError)
            holding.signal()
            try await holder.waitForAll()
        }
        // Had the cancelled waiter kept its place in the queue, the slot would have gone to it.
        #expect(slots.waitingCount == 0)
        #expect(try await slots.run { 42 } == 42)
    }
}
