import Foundation

/// What the socket server calls for each connection's lines. Implemented by the daemon's dispatcher.
public protocol SocketRequestHandler: Sendable {
    /// Handles one request line; answers (and later events) go to `connection.outbox`.
    func handle(line: Data, connection: ConnectionContext) async
    /// The connection has ended; drop anything registered for it (subscriptions).
    func connectionClosed(_ connection: ConnectionContext) async
    /// The line to send before closing a connection whose line exceeded the limit.
    func lineTooLongResponse(limit: Int) -> Data
}

/// One accepted connection as request handlers see it.
public struct ConnectionContext: Sendable {
    /// Unique per server run.
    public let id: UInt64
    /// Who is on the other end (from the kernel, not from anything the client said).
    public let peer: PeerCredentials
    /// Where to write lines for this connection; writes keep their order.
    public let outbox: Outbox
}

/// The ordered outbound queue of one connection.
public struct Outbox: Sendable {
    let continuation: AsyncStream<Data>.Continuation

    /// Queues a complete line (with its newline) for writing. Dropped once the connection is gone.
    public func send(_ line: Data) {
        continuation.yield(line)
    }
}
