import BlockingCalls
import FoundationGaps
import NIOCore

/// Whose program is at the other end of a connection to the sign-in page: the port by which the
/// server answers only its own user. A fake in tests; `ProcTablePeerIdentity` in the daemon.
public protocol LoopbackPeerIdentity: Sendable {
    /// The uid owning the client's socket of the connection from `client` to `server`; nil when
    /// it cannot be told (then the connection is closed unanswered).
    func uid(client: SocketAddress, server: SocketAddress) async -> UInt32?
}

/// The kernel's socket tables (`/proc/net/tcp`), read on a lane of their own, because reading
/// `/proc` blocks the thread for as long as the kernel takes to write out every socket.
public struct ProcTablePeerIdentity: LoopbackPeerIdentity {
    private let lane: BlockingLane

    /// Reads the tables on `lane`.
    public init(lane: BlockingLane) {
        self.lane = lane
    }

    /// The uid the tables give the client's socket; nil for anything but IPv4.
    public func uid(client: SocketAddress, server: SocketAddress) async -> UInt32? {
        guard let client = Self.endpoint(client), let server = Self.endpoint(server) else { return nil }
        return await lane.run { LoopbackPeer.uid(client: client, server: server) }
    }

    /// `address` as the tables write it: IPv4 only, which is all the page's server listens on.
    static func endpoint(_ address: SocketAddress) -> LoopbackPeer.Endpoint? {
        guard case .v4(let v4) = address, let port = address.port, let port = UInt16(exactly: port) else { return nil }
        return LoopbackPeer.Endpoint(ipv4: v4.address.sin_addr.s_addr, port: port)
    }
}
