import FoundationEssentials

/// What the socket server calls for each connection's lines. Implemented by the daemon's dispatcher.
public protocol SocketRequestHandler: Sendable {
    /// Handles one request line; answers (and later events) go to `connection.outbox`.
    func handle(line: Data, connection: ConnectionContext) async
    /// The connection has ended; drop anything registered for it (subscriptions).
    func connectionClosed(_ connection: ConnectionContext) async
    /// What to do with `line` before it is queued for `handle`: answer it at once when that needs
    /// no waiting (a cached token), or hand over the work that answers the request read here.
    /// Called on the connection's event loop with the line where it lies in the receive buffer
    /// (valid only during the call), so it must never block or suspend.
    func answerAtOnce(line: UnsafeRawBufferPointer, connection: ConnectionContext) -> ImmediateAnswer
}

extension SocketRequestHandler {
    /// Nothing is answered at once unless a handler says how.
    public func answerAtOnce(line: UnsafeRawBufferPointer, connection: ConnectionContext) -> ImmediateAnswer { .pass }
}

/// What the event loop does with a request line (`SocketRequestHandler.answerAtOnce`).
public enum ImmediateAnswer: Sendable {
    /// Send this line (newline included) now.
    case reply([UInt8])
    /// The line was read, and this work answers it through the outbox; it runs in the
    /// connection's task, in order with the connection's other requests.
    case later(@Sendable () async -> Void)
    /// Queue the line for `handle`.
    case pass
}

/// One accepted connection as request handlers see it.
public struct ConnectionContext: Sendable {
    /// Unique per server run.
    public let id: UInt64
    /// Who is on the other end (from the kernel, not from anything the client said).
    public let peer: PeerCredentials
    /// The executable and sandbox app id behind `peer`, read when the connection was accepted.
    public let client: ClientIdentity
    /// Where to write lines for this connection; writes keep their order.
    public let outbox: Outbox
    /// Whether the connection is busy or subscribed, for the idle timeout.
    public let activity: ConnectionActivity
    /// Whether the connection has ended, for a request that only waits to stop waiting.
    public let hangUp: ConnectionHangUp

    /// Creates a context (the server does, for each accepted connection; and the fuzzer).
    package init(id: UInt64, peer: PeerCredentials, client: ClientIdentity, outbox: Outbox, activity: ConnectionActivity,
                 hangUp: ConnectionHangUp = ConnectionHangUp()) {
        self.id = id
        self.peer = peer
        self.client = client
        self.outbox = outbox
        self.activity = activity
        self.hangUp = hangUp
    }
}
