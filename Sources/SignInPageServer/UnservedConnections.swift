import NIOCore
import Synchronization

/// The connections a page's server has accepted and not yet handed to a task that answers (and
/// so closes) them. NIO accepts a connection and checks its owner before the server's loop takes
/// it; when the loop ends first (the page closed, or its task was cancelled) a connection
/// still in between would stay open forever, its client waiting for an answer that never comes.
/// Once the loop has ended, every one of them is closed, and any accepted later is refused.
final class UnservedConnections: Sendable {
    private struct State {
        var closed = false
        var channels: [ObjectIdentifier: any Channel] = [:]
    }

    private let state = Mutex(State())

    /// Records `channel`, just accepted; false once the server has stopped serving (the caller
    /// closes it).
    func admit(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.channels[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    /// `channel` is in the hands of a task that answers or refuses it, and closes it.
    func handedOver(_ channel: any Channel) {
        _ = state.withLock { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// The server's loop has ended: closes every connection not handed over, and refuses any
    /// accepted from now on.
    func closeAll() {
        let unserved = state.withLock { state in
            state.closed = true
            defer { state.channels.removeAll() }
            return Array(state.channels.values)
        }
        for channel in unserved { channel.close(promise: nil) }
    }
}
