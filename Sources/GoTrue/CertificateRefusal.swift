import FoundationEssentials
import NIOSSL

/// Says why a server's TLS certificate was refused, in words a user can act on: it is not trusted
/// (self-signed, or from an unknown authority), it is for another name, or it has expired.
enum CertificateRefusal: Equatable {
    /// The certificate chain was not accepted (trust or dates).
    case unverified
    /// The chain was trusted, but the leaf does not name the host.
    case wrongName

    /// The refusal `error` reports, or nil when `error` is not about the certificate.
    init?(_ error: any Error) {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            self = .wrongName
            return
        }
        // BoringSSL reports every failed chain check with this one reason; its name is all a
        // caller can see of it (the error's code is not public).
        if case NIOSSLError.handshakeFailed(.sslError(let stack)) = error,
           stack.contains(where: { $0.description.contains("CERTIFICATE_VERIFY_FAILED") }) {
            self = .unverified
            return
        }
        return nil
    }

    /// The rest of a sentence that begins "the TLS certificate of HOST": what is wrong and what
    /// to do. `chain` is what the server presented (nil when it could not be fetched: through a
    /// proxy, or when the server went away); `proxy` names the variable of the proxy in between.
    func problem(host: String, chain: [CertificateFacts]?, trust: TLSTrust, proxy: String?, now: Date) -> String {
        let bareHost = host.hasPrefix("[") ? String(host.dropFirst().prefix { $0 != "]" }) : String(host.prefix { $0 != ":" })
        switch self {
        case .wrongName:
            guard let names = chain?.first?.hostNames, !names.isEmpty else {
                return "does not name \(bareHost): check the url of the profile"
            }
            let listed = names.prefix(4).joined(separator: ", ") + (names.count > 4 ? ", …" : "")
            return "is for \(listed), not \(bareHost): check the url of the profile"
        case .unverified:
            guard let chain, let leaf = chain.first else {
                let through = proxy.map { ", and the connection went through the proxy in \($0), which may be intercepting it" } ?? ""
                return "is not trusted: it has expired, is self-signed or was issued by an authority not in \(trust.description)\(through)"
                    + Self.trustAdvice
            }
            if leaf.notValidBefore > now {
                return "is not valid before \(Self.format(leaf.notValidBefore)): check this computer's date and time"
            }
            if leaf.notValidAfter < now {
                return "expired on \(Self.format(leaf.notValidAfter)): the server's certificate must be renewed (or this computer's date is wrong)"
            }
            if let expired = chain.dropFirst().first(where: { !$0.isSelfIssued && $0.notValidAfter < now }) {
                let name = expired.subjectCommonName.map { " ('\($0)')" } ?? ""
                return "depends on an intermediate certificate\(name) that expired on \(Self.format(expired.notValidAfter)): the server's chain must be renewed"
            }
            if leaf.isSelfIssued {
                return "is not trusted: it is self-signed, and neither it nor an authority that issued it is in \(trust.description)" + Self.trustAdvice
            }
            let issuer = leaf.issuerCommonName.map { "'\($0)'" } ?? "an authority"
            return "is not trusted: it was issued by \(issuer), an authority not in \(trust.description) (unknown issuer)" + Self.trustAdvice
        }
    }

    private static let trustAdvice = "; if the server is yours, name its CA in SSL_CERT_FILE (see authd(8)); otherwise a captive portal or an intercepting proxy may be answering in its place"

    private static func format(_ date: Date) -> String {
        // The ISO 8601 text up to the minutes, read as "yyyy-MM-dd HH:mm UTC".
        let text = date.formatted(.iso8601)
        return text.prefix(10) + " " + text.dropFirst(11).prefix(5) + " UTC"
    }
}
