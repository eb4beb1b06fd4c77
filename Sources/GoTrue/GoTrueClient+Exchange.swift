import AuthCore
import FoundationEssentials
import FoundationGaps
import NIOCore
import NIOHTTP1
import NIOSSL

/// The request plumbing every call shares: bodies encoded, queries written, the HTTP exchange
/// made and its failures explained.
extension GoTrueClient {
    /// A request body as JSON: members as the body type names them, nil members left out, keys
    /// in sorted order (so the same request is the same bytes every time).
    func encode(_ body: some RequestBodyMembers) throws(ServerFailure) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        guard let data = try? encoder.encode(body.object) else {
            throw .notSent(url: authURL.absoluteString, detail: "the request could not be encoded")
        }
        return data
    }

    /// Metadata given as JSON (`user_metadata`), to send as a member of a body.
    func metadataValue(_ data: Data?) throws(ServerFailure) -> JSONValue? {
        guard let data else { return nil }
        do { return try JSONValue(parsing: data) } catch {
            throw .invalidResponse(detail: "user data is not JSON")
        }
    }

    /// `redirect_to` as a query parameter, where supabase's clients send it for `/otp`,
    /// `/signup`, `/recover` and `/resend`.
    static func redirectQuery(_ link: EmailLink?) -> String? {
        link.map { query([URLQueryItem(name: "redirect_to", value: $0.redirectTo)]) }
    }

    /// A percent-encoded query; `+` encoded too, which GoTrue would read as a space.
    static func query(_ items: [URLQueryItem]) -> String {
        var components = URLComponents()
        components.queryItems = items
        return (components.percentEncodedQuery ?? "").replacing("+", with: "%2B")
    }

    /// `exchange` of a request with `body` as its JSON body; the answer's body.
    func send(_ method: String, _ path: String, query: String? = nil, body: some RequestBodyMembers,
              bearer: String? = nil) async throws(ServerFailure) -> Data {
        try await exchange(method, path, query: query, body: try encode(body), bearer: bearer).data
    }

    /// `exchange` of a request without a body; the answer's body.
    func send(_ method: String, _ path: String, query: String? = nil, bearer: String? = nil) async throws(ServerFailure) -> Data {
        try await exchange(method, path, query: query, body: nil, bearer: bearer).data
    }

    /// One request to `path` under the auth URL, `query` already percent-encoded, with the
    /// headers every request carries (and `bearer` as the Authorization); the answer's body and
    /// headers when its status is 2xx, else GoTrue's error decoded.
    func exchange(_ method: String, _ path: String, query: String?, body: Data?, bearer: String? = nil) async throws(ServerFailure) -> (data: Data, headers: HTTPHeaders) {
        var components = URLComponents(url: authURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
        components?.percentEncodedQuery = query
        guard let url = components?.url else { throw .notSent(url: authURL.absoluteString, detail: "bad URL") }
        if case .unsupported(let variable, let reason) = proxy {
            throw .notSent(url: authURL.absoluteString, detail: "the proxy in \(variable) cannot be used: \(reason)")
        }
        if let trustProblem { throw .untrustedCertificate(host: hostAndPort, problem: trustProblem) }
        guard let host = url.host, !host.isEmpty else { throw .notSent(url: authURL.absoluteString, detail: "bad URL") }
        let isHTTPS = url.scheme?.lowercased() == "https"
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let tls: NIOSSLContext?
        do { tls = isHTTPS ? try TLSContexts.context(for: trust) : nil } catch {
            throw .untrustedCertificate(host: hostAndPort, problem: "cannot be checked: the TLS settings could not be made (\(error))")
        }
        let schemePort = isHTTPS ? 443 : 80
        let route = HTTPExchange.Route(host: bareHost, port: url.port ?? schemePort, tls: tls, proxy: proxy)

        var headers = HTTPHeaders()
        // The port only when it is not the scheme's own, as browsers and curl write Host.
        headers.add(name: "Host", value: HTTPExchange.authority(host: bareHost, port: route.port == schemePort ? nil : route.port))
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Accept", value: "application/json")
        headers.add(name: "apikey", value: anonKey)
        headers.add(name: GoTrueErrorDecoder.apiVersionHeader, value: GoTrueErrorDecoder.apiVersion)
        headers.add(name: "X-Client-Info", value: clientInfo)
        if let bearer { headers.add(name: "Authorization", value: "Bearer \(bearer)") }
        // Always a length for a method with a body, even an empty one: without it NIO's encoder
        // would send POST, PUT and PATCH chunked, which some gateways refuse.
        if body != nil || ["POST", "PUT", "PATCH"].contains(method) { headers.add(name: "Content-Length", value: String(body?.count ?? 0)) }
        // No connection reuse. A refresh comes about once an hour, long after any keep-alive
        // connection has gone stale, and a POST that meets a connection the server has just
        // closed cannot safely be sent again: a fresh connection each time fails or succeeds once.
        headers.add(name: "Connection", value: "close")
        let path = components?.percentEncodedPath ?? "/"
        let target = (path.isEmpty ? "/" : path) + (query.map { "?\($0)" } ?? "")
        // NIO refuses a header value with a control character when writing it, after the
        // connection is made; refused here, it is plainly a request that was never sent. The
        // values come from the profile (the anon key) and from the server (the access token).
        if headers.contains(where: { _, value in value.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } }) {
            throw .notSent(url: authURL.absoluteString, detail: "a header value (the anon key or the access token) holds a control character")
        }
        let request = HTTPExchange.Request(method: HTTPMethod(rawValue: method), target: target, headers: headers, body: body)

        let response: HTTPExchange.Response
        let deadline = NIODeadline.now() + timeout
        do {
            response = try await HTTPExchange.perform(request, route: route, deadline: deadline, maxAnswerBytes: Self.maxAnswerBytes)
        } catch {
            if let refusal = CertificateRefusal(error.underlying) { throw await untrusted(refusal, deadline: deadline) }
            // Transport errors name the host and what failed, never a header or the body, so they carry no secret.
            let detail = HTTPTransportError.describe(error.underlying)
            if !error.sent { throw .notSent(url: authURL.absoluteString, detail: detail) }
            throw .unreachable(url: authURL.absoluteString, detail: detail)
        }
        guard (200..<300).contains(response.status) else {
            throw GoTrueErrorDecoder.failure(status: response.status, headers: response.headers, body: response.body)
        }
        return (response.body, response.headers)
    }

    /// The refused certificate, explained. Nothing was sent: the handshake failed before the request.
    private func untrusted(_ refusal: CertificateRefusal, deadline: NIODeadline) async -> ServerFailure {
        var chain: [CertificateFacts]?
        // Only a direct connection is inspected: through a proxy the inspection would have to
        // repeat the proxy's handshake too, and the message names the possible causes instead.
        if proxy == .direct, let host = authURL.host {
            chain = await CertificateInspector.presentedChain(host: host, port: authURL.port ?? 443, deadline: deadline)
        }
        return .untrustedCertificate(host: hostAndPort, problem: refusal.problem(host: hostAndPort, chain: chain, trust: trust, proxy: proxyVariable, now: Date()))
    }

    /// The server as a message names it: `host`, or `host:port` when the URL has a port.
    private var hostAndPort: String {
        let host = authURL.host ?? authURL.absoluteString
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return authURL.port.map { "\(shown):\($0)" } ?? shown
    }
}
