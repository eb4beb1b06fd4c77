import AsyncHTTPClient
import NIOCore
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif

/// Short, secret-free texts for the ways an HTTP exchange can fail below HTTP, for the
/// "cannot reach <server>: <why>" that status and sign-in errors show.
enum HTTPTransportError {
    /// What went wrong, in a few words.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .connectTimeout, .readTimeout, .writeTimeout, .socksHandshakeTimeout, .tlsHandshakeTimeout:
                return "timed out"
            case .remoteConnectionClosed:
                return "connection lost"
            case .cancelled:
                return "cancelled"
            default:
                return "\(error)"
            }
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

    /// Whether `error` happened before the request could be written: name resolution, the
    /// connection, or the TLS handshake. After those, a failure (a reset, a read timeout, the
    /// deadline) may come after the server got the request.
    static func failedBeforeSending(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .socksHandshakeTimeout, .tlsHandshakeTimeout, .httpProxyHandshakeTimeout: return true
            default: return false
            }
        }
        if error is NIOConnectionError || error is NIOSSLExtraError { return true }
        if let error = error as? NIOSSLError {
            // An unclean shutdown may come after the request went out; a failed handshake cannot.
            if case .handshakeFailed = error { return true }
            return false
        }
        if case ChannelError.connectTimeout = error { return true }
        if let error = error as? IOError {
            return [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ENETDOWN].contains(error.errnoCode)
        }
        return false
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
