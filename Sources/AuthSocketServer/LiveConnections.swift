import NIOCore
import Synchronization

/// The open connections of a server, so that its shutdown can close them all.
///
/// A connection that only asks for cached tokens lives on its event loop alone, with no task that
/// would see the shutdown; this is how the shutdown reaches it. Once closed, the set closes
/// whatever is added to it at once, which covers a connection accepted while the listener was
/// closing.
final class LiveConnections: Sendable {
    private struct State {
        var channels: [UInt64: any Channel] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Adds connection `id`; it leaves the set by itself when its channel closes.
    func add(_ channel: any Channel, id: UInt64) {
        let admitted = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.channels[id] = channel
            return true
        }
        guard admitted else {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [self] _ in
            _ = state.withLock { $0.channels.removeValue(forKey: id) }
        }
    }

    /// Closes every connection, and every one added from now on.
    func closeAll() {
        let channels = state.withLock { state -> [any Channel] in
            state.closed = true
            defer { state.channels = [:] }
            return Array(state.channels.values)
        }
        for channel in channels { channel.close(promise: nil) }
    }
}
