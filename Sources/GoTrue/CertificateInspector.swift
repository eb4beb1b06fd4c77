import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// Fetches the certificate chain a server presents, without trusting it and without sending it
/// anything but a TLS greeting, to say why the chain was refused.
///
/// BoringSSL's handshake error only says that verification failed (`CERTIFICATE_VERIFY_FAILED`),
/// not whether the certificate expired, is self-signed or comes from an unknown authority, and
/// the failed handshake's error carries no chain. So after such a failure a second handshake
/// collects the chain in a verification callback and ends there, and `CertificateRefusal` checks
/// it. A second handshake costs one round trip, only on a path that already failed.
enum CertificateInspector {
    /// The chain `host:port` presents (leaf first), or nil when it cannot be had by `deadline`.
    static func presentedChain(host: String, port: Int, deadline: NIODeadline) async -> [CertificateFacts]? {
        let captured = CapturedChain()
        var configuration = TLSConfiguration.makeClientConfiguration()
        // The callback replaces verification, so no store needs to be read.
        configuration.trustRoots = .certificates([])
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        // SNI carries names only; for an IP address the server picks its default certificate, as
        // it did for the refused connection.
        let serverName = HTTPExchange.address(host, port: port) == nil ? host : nil
        let timeout = deadline - .now()
        guard timeout > .zero else { return nil }
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: serverName) { chain, verdict in
                        // All or nothing: a certificate left out would make the next one look like the leaf.
                        let facts = chain.map(CertificateFacts.init)
                        captured.chain.withLock { $0 = facts.contains { $0 == nil } ? nil : facts.compactMap { $0 } }
                        // Refusing ends the handshake here: nothing more is exchanged.
                        verdict.succeed(NIOSSLVerificationResult.failed)
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        guard let channel = try? await bootstrap.connect(host: host, port: port).get() else { return nil }
        let stop = channel.eventLoop.scheduleTask(deadline: deadline) { () -> Void in channel.close(promise: nil) }
        try? await channel.closeFuture.get()
        stop.cancel()
        return captured.chain.withLock { $0 }
    }
}

/// Where the verification callback leaves the chain for the inspector.
private final class CapturedChain: Sendable {
    let chain = Mutex<[CertificateFacts]?>(nil)
}
