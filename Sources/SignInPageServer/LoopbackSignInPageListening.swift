import BlockingCalls
import NIOCore
import NIOPosix
import SignInPage
import Synchronization

extension SignInPageHTTPServer: SignInPageListener {}

/// The daemon's sign-in page servers: each a `SignInPageHTTPServer` on 127.0.0.1 that answers
/// only connections of this user.
public struct LoopbackSignInPageListening: SignInPageListening {
    private let identity: (any LoopbackPeerIdentity)?
    private let limits: SignInPageHTTPServer.Limits
    private let group: any EventLoopGroup
    private let lane = SharedLane(name: "authd-page-peer")

    /// Servers on `group` with `limits`, their connections' owners told by `identity`; by
    /// default by the kernel's socket tables, read on one lane that every page shares: a thread
    /// started with the first page (an idle daemon that showed none keeps none), never one a page.
    public init(identity: (any LoopbackPeerIdentity)? = nil, limits: SignInPageHTTPServer.Limits = SignInPageHTTPServer.Limits(),
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.identity = identity
        self.limits = limits
        self.group = group
    }

    /// A new server at a port the kernel picks.
    public func listen() async throws -> any SignInPageListener {
        let identity = self.identity ?? ProcTablePeerIdentity(lane: lane.lane)
        return try await SignInPageHTTPServer.bind(identity: identity, limits: limits, group: group)
    }
}

/// A lane made on first use, then shared.
private final class SharedLane: Sendable {
    private let name: String
    private let made = Mutex<BlockingLane?>(nil)

    init(name: String) { self.name = name }

    var lane: BlockingLane {
        made.withLock { made in
            if let made { return made }
            let lane = BlockingLane(name: name)
            made = lane
            return lane
        }
    }
}
