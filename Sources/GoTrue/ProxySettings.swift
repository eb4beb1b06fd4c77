import FoundationEssentials
import FoundationGaps

/// The proxy a request to a URL goes through, read from the environment the way curl reads it,
/// so that authd keeps working where the desktop's other tools do.
///
/// `https_proxy` / `HTTPS_PROXY` for https URLs, `http_proxy` for http (only the lowercase one,
/// since CGI sets `HTTP_PROXY` from a request header), then `all_proxy` / `ALL_PROXY`;
/// `no_proxy` / `NO_PROXY` lists hosts and domains that go direct (`*` for every host).
/// Loopback servers (`localhost`, `127.0.0.0/8`, `::1`) always go direct, whatever the variables say.
public enum ProxySettings: Sendable, Hashable {
    /// No proxy.
    case direct
    /// An HTTP proxy (`http://` or no scheme), which requests go through with CONNECT.
    case http(host: String, port: Int, username: String?, password: String?)
    /// A SOCKS5 proxy (`socks5://` or `socks5h://`), without authentication.
    case socks(host: String, port: Int)
    /// A proxy URL authd cannot use; requests fail and say why instead of going direct.
    case unsupported(variable: String, reason: String)

    /// The proxy for requests to `url` under `environment`.
    public static func forURL(_ url: URL, environment: [String: String]) -> ProxySettings {
        guard let name = variable(forURL: url, environment: environment), let value = environment[name] else { return .direct }
        return parse(value, variable: name)
    }

    /// The variable whose proxy requests to `url` go through, or nil when they go direct.
    public static func variable(forURL url: URL, environment: [String: String]) -> String? {
        let host = (url.host ?? "").lowercased()
        // A server on this machine is reached directly, never through a proxy: the password or
        // refresh token for a plain-http loopback server would otherwise cross the network in
        // clear text to a proxy that has no business seeing it (curl only spares `localhost`).
        if isLoopback(host) { return nil }
        if bypasses(host: host, list: environment["no_proxy"] ?? environment["NO_PROXY"] ?? "") { return nil }
        let names = url.scheme?.lowercased() == "https"
            ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
            : ["http_proxy", "all_proxy", "ALL_PROXY"]
        return names.first { !(environment[$0] ?? "").isEmpty }
    }

    /// One proxy URL, as written in a `*_proxy` variable.
    static func parse(_ value: String, variable: String) -> ProxySettings {
        // curl takes "host:port" without a scheme as an HTTP proxy.
        let written = value.contains("://") ? value : "http://\(value)"
        guard let components = URLComponents(string: written), let host = components.host, !host.isEmpty else {
            return .unsupported(variable: variable, reason: "it is not a proxy URL")
        }
        switch components.scheme?.lowercased() {
        case "http":
            // `user` and `password` come percent-decoded.
            return .http(host: host, port: components.port ?? 1080, username: components.user, password: components.password)
        case "socks5", "socks5h":
            guard components.user == nil else {
                return .unsupported(variable: variable, reason: "SOCKS proxies with a user name are not supported")
            }
            return .socks(host: host, port: components.port ?? 1080)
        default:
            return .unsupported(variable: variable, reason: "only http:// and socks5:// proxies are supported")
        }
    }

    /// Whether `host` is in a `no_proxy` list: `*`, the host itself, or a domain it is under
    /// (`example.com` and `.example.com` both cover `api.example.com`).
    static func bypasses(host: String, list: String) -> Bool {
        for entry in list.split(separator: ",") {
            var pattern = entry.trimmingWhitespace().lowercased()
            if pattern == "*" { return true }
            if pattern.hasPrefix(".") { pattern.removeFirst() }
            guard !pattern.isEmpty else { continue }
            if host == pattern || host.hasSuffix("." + pattern) { return true }
        }
        return false
    }

    /// `localhost`, `::1` (with or without brackets) or a dotted quad in 127.0.0.0/8: the rule
    /// AuthProtocol's `LoopbackHost` applies to profile URLs, restated here because this adapter
    /// depends on the core alone. Only the address itself: `127.0.0.1.example.com` is a name DNS
    /// may send anywhere.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimming { $0 == "[" || $0 == "]" }.lowercased()
        if bare == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy { $0.isASCII && $0.isNumber } && Int(part).map { $0 <= 255 } == true
        }) else { return false }
        return parts[0] == "127"
    }
}

/// What logs and `String(describing:)` show of a proxy: its host and port, never its password,
/// and only whether a user name is set.
extension ProxySettings: CustomStringConvertible, CustomDebugStringConvertible {
    /// The proxy without its credentials.
    public var description: String {
        switch self {
        case .direct: "direct"
        case .http(let host, let port, let username, _):
            "http proxy \(host):\(port)\(username == nil ? "" : " with credentials")"
        case .socks(let host, let port): "socks5 proxy \(host):\(port)"
        case .unsupported(let variable, _): "unusable proxy in \(variable)"
        }
    }

    /// The same as `description`: a debug print must not show the password either.
    public var debugDescription: String { description }
}
