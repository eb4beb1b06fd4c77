import FoundationEssentials

/// Which addresses from the server a browser may be sent to: the identity provider's page that
/// GoTrue answers `/sso` and `/user/identities/authorize` with. Only https, or plain http when the
/// project itself is plain http on this machine (a development server). Any other scheme
/// (`file:`, `javascript:`, an app's own) would have the desktop's URL handlers act on whatever
/// the server chose, so authd refuses to hand it out and authctl refuses to open or print it.
public enum BrowserURLRule {
    /// Why an address is not opened. Its `description` quotes at most the scheme, never the rest
    /// of the address: a refused address may be long, or made to mislead whoever reads it.
    public enum Refusal: Equatable, Sendable, CustomStringConvertible {
        /// Not an absolute http(s) URL with a host, or one with spaces or control characters.
        case notAURL
        /// A scheme other than https and http (its first letters, lower-cased).
        case scheme(String)
        /// Plain http from a project that is not plain http on this machine.
        case plainHTTP

        /// Why the address is refused, in words that quote nothing of it but its scheme.
        public var description: String {
            switch self {
            case .notAURL: return "it is not an https URL"
            case .scheme(let scheme): return "its scheme is '\(scheme)', and only https is opened"
            case .plainHTTP: return "it is plain http, which is opened only for a project on this computer (http://127.0.0.1:PORT)"
            }
        }
    }

    /// The longest scheme quoted in a refusal.
    static let quotedSchemeLength = 16

    /// Nil when `url` may be opened in a browser for the project at `projectURL` (the profile's
    /// Supabase URL), else why not.
    public static func refusal(of url: String, projectURL: String) -> Refusal? {
        // A browser or a shell would read such characters otherwise than the check does.
        guard !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }),
              let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), !scheme.isEmpty else { return .notAURL }
        guard scheme == "https" || scheme == "http" else {
            // The characters a scheme may have (RFC 3986), whatever the parser let through.
            let quoted = scheme.utf8.filter { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || [0x2B, 0x2D, 0x2E].contains($0) }
            return .scheme(String(decoding: quoted.prefix(quotedSchemeLength), as: UTF8.self))
        }
        guard let host = parsed.host, !host.isEmpty else { return .notAURL }
        return scheme == "https" || allowsPlainHTTP(projectURL) ? nil : .plainHTTP
    }

    /// Whether the project is itself plain http on this machine, where its own pages (and a
    /// development identity provider beside it) are plain http too.
    static func allowsPlainHTTP(_ projectURL: String) -> Bool {
        guard let project = URL(string: projectURL), project.scheme?.lowercased() == "http", let host = project.host else { return false }
        return LoopbackHost.contains(host)
    }
}
