import FoundationEssentials
import Synchronization

/// The ordered, bounded outbound queue of one connection.
///
/// Answers and events wait here until the connection's single writer hands them to the kernel.
/// A client that stops reading would otherwise make the daemon hold every event for it forever;
/// past `limit` queued bytes the queue is dropped, the client's last line is a `too_slow`
/// error, and `onOverflow` runs so the server can cut the connection.
public final class Outbox: Sendable {
    /// What the writer takes from the queue.
    package enum Item: Sendable {
        /// An answer or event.
        case line(Data)
        /// The final error after an overflow; the connection closes once it is written.
        case final(Data)
    }

    private struct State {
        var queuedBytes = 0
        var overflowed = false
        var finished = false
    }

    private enum Decision { case enqueue, overflow, drop }

    private let continuation: AsyncStream<Item>.Continuation
    private let limit: Int
    private let finalLine: Data
    private let onOverflow: @Sendable () -> Void
    private let state = Mutex(State())

    /// Creates an outbox writing into `continuation`; more than `limit` queued bytes overflows it.
    package init(continuation: AsyncStream<Item>.Continuation, limit: Int, finalLine: Data, onOverflow: @escaping @Sendable () -> Void) {
        self.continuation = continuation
        self.limit = limit
        self.finalLine = finalLine
        self.onOverflow = onOverflow
    }

    /// Queues a complete line (with its newline). Dropped once the connection is gone or overflowed.
    public func send(_ line: Data) {
        let decision: Decision = state.withLock { state in
            if state.overflowed || state.finished { return .drop }
            if state.queuedBytes + line.count > limit {
                state.overflowed = true
                return .overflow
            }
            state.queuedBytes += line.count
            return .enqueue
        }
        switch decision {
        case .enqueue:
            continuation.yield(.line(line))
        case .overflow:
            continuation.yield(.final(finalLine))
            continuation.finish()
            onOverflow()
        case .drop:
            break
        }
    }

    /// Whether nothing is queued and the connection is neither ending nor being dropped for
    /// reading too slowly: only then may a line bypass the queue (see ImmediateAnswerer).
    var isIdle: Bool { state.withLock { $0.queuedBytes == 0 && !$0.overflowed && !$0.finished } }

    /// Bytes queued and not yet taken by the writer.
    public var queuedBytes: Int { state.withLock { $0.queuedBytes } }

    /// The writer took `item`; true when it should be written (lines queued before an overflow are not).
    package func taken(_ item: Item) -> Bool {
        switch item {
        case .final:
            return true
        case .line(let line):
            return state.withLock { state in
                state.queuedBytes -= line.count
                return !state.overflowed
            }
        }
    }

    /// Nothing more will be queued: the connection is ending.
    package func finish() {
        state.withLock { $0.finished = true }
        continuation.finish()
    }
}
