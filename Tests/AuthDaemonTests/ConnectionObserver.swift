import AuthSocketServer
import AuthTestSupport
import Foundation
import Synchronization

/// What a harness's server did with its connections, for a test to wait on: each connection as
/// it sends its first request to a task, and each as the server is done with it.
final class ConnectionObserver: Sendable {
    private struct State {
        var seen: [UInt64: ConnectionContext] = [:]
        var closed: [UInt64] = []
    }

    private let state = Mutex(State())

    /// A request of `connection`'s reached the handler.
    func requested(_ connection: ConnectionContext) { state.withLock { $0.seen[connection.id] = connection } }

    /// The server is done with `connection`.
    func closed(_ connection: ConnectionContext) { state.withLock { $0.closed.append(connection.id) } }

    /// Waits until `count` connections were closed (the bound only ends a failing test); the ids
    /// of all closed by then, in the order they closed.
    func waitForClosed(_ count: Int) async -> [UInt64] {
        _ = await eventually(within: 60) { state.withLock { $0.closed.count } >= count }
        return state.withLock { $0.closed }
    }

    /// Waits until no connection has a request in flight: a client reads its answer a moment
    /// before the server counts the request done, and an idle look in between would find the
    /// connection busy. False after `seconds`, which only a failing run waits.
    func waitUntilNoRequestInFlight(seconds: Double = 30) async -> Bool {
        await eventually(within: seconds, every: .milliseconds(2)) {
            !state.withLock { $0.seen.values.contains { $0.activity.hasRequestInFlight } }
        }
    }
}
