import BlockingCalls
import NIOCore
import NIOPosix
import SignInPage

extension SignInPageHTTPServer: SignInPageListener {}

/// The daemon's sign-in page servers: each a `SignInPageHTTPServer` on 127.0.0.1 that answers
/// only connections of this user.
public struct LoopbackSignInPageListening: SignInPageListening {
    private let identity: (any LoopbackPeerIdentity)?
    private let limits: SignInPageHTTPServer.Limits
    private let group: any EventLoopGroup

    /// Servers on `group` with `limits`, their connections' owners told by `identity`; by
    /// default each server reads the kernel's socket tables on a lane of its own, a thread that
    /// lives only as long as its page (an idle daemon keeps none).
    public init(identity: (any LoopbackPeerIdentity)? = nil, limits: SignInPageHTTPServer.Limits = SignInPageHTTPServer.Limits(),
                group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.identity = identity
        self.limits = limits
        self.group = group
    }

    /// A new server at a port the kernel picks.
    public func listen() async throws -> any SignInPageListener {
        let identity = self.identity ?? ProcTablePeerIdentity(lane: BlockingLane(name: "authd-page-peer"))
        return try await SignInPageHTTPServer.bind(identity: identity, limits: limits, group: group)
    }
}
