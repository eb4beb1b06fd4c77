import NIOSSL

/// The certificate authorities authd trusts for https servers.
///
/// The system's store (Debian's `/etc/ssl/certs`), unless `SSL_CERT_FILE` names a PEM bundle,
/// which then replaces it, as it does for OpenSSL-based tools: for a company's own CA, or a
/// development server's. The bundle is read when the first connection is made.
public enum TLSTrust: Sendable, Hashable {
    /// The system's store.
    case system
    /// The PEM bundle at `path` (from `SSL_CERT_FILE`).
    case bundle(path: String)

    /// The trust `environment` asks for.
    public init(environment: [String: String]) {
        if let path = environment["SSL_CERT_FILE"], !path.isEmpty { self = .bundle(path: path) } else { self = .system }
    }

    /// What is wrong with the bundle, when it cannot be used (it is missing, unreadable or holds
    /// no certificate), as the rest of a sentence that begins with "the TLS certificate of HOST".
    func problem() -> String? {
        guard case .bundle(let path) = self else { return nil }
        let count = (try? NIOSSLCertificate.fromPEMFile(path))?.count ?? 0
        guard count == 0 else { return nil }
        return "cannot be checked: SSL_CERT_FILE names \(path), which holds no readable PEM certificate; fix the file or unset the variable"
    }

    /// The TLS settings for clients: verification in full, against these authorities.
    var clientConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if case .bundle(let path) = self { configuration.trustRoots = .file(path) }
        return configuration
    }

    /// How a message names these authorities, after "in".
    var description: String {
        switch self {
        case .system: return "this computer's CA store"
        case .bundle(let path): return "SSL_CERT_FILE (\(path))"
        }
    }
}
