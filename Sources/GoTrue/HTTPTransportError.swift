import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSOCKS
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// Short, secret-free texts for the ways an HTTP exchange can fail below HTTP, for the
/// "cannot reach <server>: <why>" that status and sign-in errors show.
enum HTTPTransportError {
    /// What went wrong, in a few words.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPExchangeError {
            switch error {
            case .timedOut: return "timed out"
            case .cancelled: return "cancelled"
            case .connectionClosed: return "connection lost"
            case .answerTooLarge: return "the answer was too large"
            case .proxyRefused(let status):
                return status == 0 ? "the proxy did not answer as an HTTP proxy" : "the proxy refused the connection (HTTP \(status))"
            case .addressThroughProxy:
                return "an https server named by its IP address cannot be checked through a proxy: name it by its host name, or list it in no_proxy"
            }
        }
        // The answer ended early (the decoder sees the end of the stream before the collector does).
        if let error = error as? HTTPParserError, error == .invalidEOFState { return "connection lost" }
        if error is HTTPParserError { return "the answer was not HTTP" }
        if let error = error as? ChannelError, error == .ioOnClosedChannel || error == .alreadyClosed || error == .eof { return "connection lost" }
        if error is SOCKSError.ConnectionFailed { return "the SOCKS proxy could not connect to the server" }
        if error is SOCKSError.InvalidAuthenticationSelection || error is SOCKSError.NoValidAuthenticationMethod {
            return "the SOCKS proxy asks for a user name, which authd does not send"
        }
        if error is SOCKSError.InvalidProtocolVersion || error is SOCKSError.InvalidReservedByte
            || error is SOCKSError.InvalidAddressType || error is SOCKSError.UnexpectedRead || error is SOCKSError.InvalidClientState {
            return "the SOCKS proxy answered what SOCKS5 does not allow"
        }
        if let error = error as? NIOConnectionError {
            // Every address failed; the first one's reason stands for all.
            if let first = error.connectionErrors.first { return describe(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "host not found" }
            return "cannot connect"
        }
        if let error = error as? IOError { return describe(errno: error.errnoCode) }
        if let error = error as? NIOSSLError { return describe(tls: error) }
        if error is NIOSSLExtraError { return "the TLS handshake failed" }
        if case ChannelError.connectTimeout = error { return "timed out" }
        if error is NIOTooManyBytesError { return "the answer was too large" }
        return "\(error)"
    }

    /// TLS failures other than a refused certificate (`CertificateRefusal` explains those).
    private static func describe(tls error: NIOSSLError) -> String {
        switch error {
        case .handshakeFailed(.sslError(let stack)):
            // BoringSSL's reason, e.g. "error:…:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at …".
            let reasons = stack.compactMap { entry -> String? in
                guard let start = entry.description.firstRange(of: "OPENSSL_internal:")?.upperBound else { return nil }
                return String(entry.description[start...].prefix { $0 != " " })
            }
            if reasons.contains("WRONG_VERSION_NUMBER") {
                return "the server does not speak TLS on that port (is it an http:// server?)"
            }
            if stack.contains(.eofDuringHandshake) { return "the connection closed during the TLS handshake" }
            return "the TLS handshake failed" + (reasons.first.map { " (\($0))" } ?? "")
        case .handshakeFailed:
            return "the TLS handshake failed"
        case .uncleanShutdown:
            return "connection lost"
        default:
            return "TLS failed"
        }
    }

    private static func describe(errno code: Int32) -> String {
        switch code {
        case ECONNREFUSED: return "connection refused"
        case ETIMEDOUT: return "timed out"
        case ENETUNREACH, EHOSTUNREACH, ENETDOWN: return "no network"
        case ECONNRESET, EPIPE, ECONNABORTED: return "connection lost"
        default: return String(cString: strerror(code))
        }
    }
}
