import AuthCore
import FoundationEssentials
import FoundationGaps
import NIOCore
import NIOHTTP1
import NIOSSL

/// `GoTrueAPI` over HTTP/1.1 (`HTTPExchange`), on SwiftNIO's shared event loops.
///
/// Every request carries `apikey` and `X-Supabase-Api-Version: 2024-01-01`, so errors come back
/// as `{"code":"<error_code>","message":…}`; the older `{"error_code":…,"msg":…}` and the OAuth
/// style `{"error":…,"error_description":…}` are understood too. TLS checks the server against
/// the system's CA store or `SSL_CERT_FILE` (`TLSTrust`), and a refused certificate is explained
/// (`CertificateRefusal`); a proxy comes from the environment as curl reads it (`ProxySettings`),
/// except for loopback servers, which are always reached directly.
/// Redirects are not followed: no GoTrue endpoint authd calls redirects, and a request that
/// carries a password or a refresh token goes to the configured server or nowhere.
public struct GoTrueClient: GoTrueAPI, CustomStringConvertible, CustomDebugStringConvertible {
    /// The auth base URL, e.g. `https://<ref>.supabase.co/auth/v1`.
    public let authURL: URL
    private let anonKey: String
    private let clientInfo: String
    private let timeout: TimeAmount
    private let proxy: ProxySettings
    /// The variable `proxy` comes from, for messages.
    private let proxyVariable: String?
    private let trust: TLSTrust
    /// Why `trust` cannot be used, for https servers; checked once, when the client is made.
    private let trustProblem: String?

    /// What logs show of the client: the server and the proxy, never the anon key or a proxy
    /// password. ServiceLifecycle names each service by interpolating it, and a struct without a
    /// description is printed field by field.
    public var description: String { "GoTrueClient(\(authURL), \(proxy))" }

    /// The same as `description`.
    public var debugDescription: String { description }

    /// The largest answer read: GoTrue's are a few KiB; a server that sends more is misbehaving.
    static let maxAnswerBytes = 1 << 20

    /// Creates a client for the project at `projectURL` (the Supabase URL, without `/auth/v1`).
    /// `clientInfo` is sent as `X-Client-Info`, as the official clients do; each request,
    /// connection included, must finish within `timeout` seconds.
    public init(projectURL: URL, anonKey: String, clientInfo: String = "authd", timeout: TimeInterval = 15,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.authURL = projectURL.appendingPathComponent("auth").appendingPathComponent("v1")
        self.anonKey = anonKey
        self.clientInfo = clientInfo
        self.timeout = .milliseconds(Int64(timeout * 1000))
        self.proxy = ProxySettings.forURL(projectURL, environment: environment)
        self.proxyVariable = ProxySettings.variable(forURL: projectURL, environment: environment)
        self.trust = TLSTrust(environment: environment)
        self.trustProblem = projectURL.scheme?.lowercased() == "https" ? trust.problem() : nil
    }

    /// `POST /token` (password, id_token, pkce, refresh_token), `POST /verify` (one-time code) or
    /// `POST /signup` (anonymous). The CAPTCHA token goes with the password grant and the
    /// anonymous sign-up only: GoTrue checks no other (id_token, pkce and refresh_token are
    /// exempt, `/verify` is not protected).
    public func signIn(_ credential: SignInCredential, captchaToken: String?) async throws(ServerFailure) -> SessionGrant {
        switch credential {
        case .password(let address, let password):
            let body = try encode(Self.adding(captchaToken, to: [address.field: address.value, "password": password]))
            return try decodeGrant(try await send("POST", "token", query: "grant_type=password", body: body))
        case .oneTimeCode(let address, let code, let type):
            let body = try encode([address.field: address.value, "token": code, "type": type.rawValue])
            return try decodeGrant(try await send("POST", "verify", query: nil, body: body))
        case .idToken(let provider, let idToken, let accessToken, let nonce):
            var fields: [String: Any] = ["provider": provider, "id_token": idToken]
            fields["access_token"] = accessToken
            fields["nonce"] = nonce
            return try decodeGrant(try await send("POST", "token", query: "grant_type=id_token", body: try encode(fields)))
        case .authorizationCode(let code, let verifier):
            let body = try encode(["auth_code": code, "code_verifier": verifier])
            return try decodeGrant(try await send("POST", "token", query: "grant_type=pkce", body: body))
        case .tokenHash(let hash, let type):
            return try decodeGrant(try await send("POST", "verify", query: nil, body: try encode(["token_hash": hash, "type": type.rawValue])))
        case .anonymous(let metadata):
            // Neither email nor phone is what makes GoTrue's /signup sign in anonymously.
            var fields: [String: Any] = [:]
            if let metadata { fields["data"] = try jsonObject(metadata) }
            return try decodeGrant(try await send("POST", "signup", query: nil, body: try encode(Self.adding(captchaToken, to: fields))))
        case .refreshToken(let refreshToken):
            return try await refresh(refreshToken: refreshToken)
        }
    }

    /// `POST /signup`: a session when the project confirms automatically, else the bare user.
    public func signUp(_ request: SignUpRequest, captchaToken: String?) async throws(ServerFailure) -> SignUpOutcome {
        var fields: [String: Any] = [request.address.field: request.address.value, "password": request.password]
        if let metadata = request.metadata { fields["data"] = try jsonObject(metadata) }
        let data = try await send("POST", "signup", query: Self.redirectQuery(request.link),
                                  body: try encode(Self.adding(request.link, to: Self.adding(captchaToken, to: fields))))
        if (try? JSONValue(parsing: data))?["access_token"] != nil {
            return .signedIn(try decodeGrant(data))
        }
        return .confirmationSent(try decodeUser(data).summary)
    }

    /// `POST /otp` (sign-in code, creating the user when asked) or `POST /recover`.
    public func sendCode(_ request: CodeRequest, captchaToken: String?, link: EmailLink?) async throws(ServerFailure) {
        switch request {
        case .signIn(let address, let createUser):
            let fields: [String: Any] = [address.field: address.value, "create_user": createUser]
            _ = try await send("POST", "otp", query: Self.redirectQuery(link), body: try encode(Self.adding(link, to: Self.adding(captchaToken, to: fields))))
        case .recovery(let email):
            _ = try await send("POST", "recover", query: Self.redirectQuery(link),
                               body: try encode(Self.adding(link, to: Self.adding(captchaToken, to: ["email": email]))))
        }
    }

    /// `POST /resend`.
    public func resend(_ request: ResendRequest, captchaToken: String?, link: EmailLink?) async throws(ServerFailure) {
        let fields: [String: Any] = [request.address.field: request.address.value, "type": request.purpose.rawValue]
        _ = try await send("POST", "resend", query: Self.redirectQuery(link), body: try encode(Self.adding(link, to: Self.adding(captchaToken, to: fields))))
    }

    /// `GET /user/identities/authorize?…&skip_http_redirect=true`: GoTrue answers the provider URL as JSON.
    public func identityLinkURL(accessToken: String, provider: String, redirectTo: String, codeChallenge: String,
                                scopes: String?) async throws(ServerFailure) -> URL {
        var items = [URLQueryItem(name: "provider", value: provider), URLQueryItem(name: "redirect_to", value: redirectTo),
                     URLQueryItem(name: "code_challenge", value: codeChallenge), URLQueryItem(name: "code_challenge_method", value: "s256"),
                     URLQueryItem(name: "skip_http_redirect", value: "true")]
        if let scopes { items.append(URLQueryItem(name: "scopes", value: scopes)) }
        let data = try await send("GET", "user/identities/authorize", query: Self.query(items), body: nil, bearer: accessToken)
        return try Self.answeredURL(data)
    }

    /// `DELETE /user/identities/{id}`.
    public func unlinkIdentity(accessToken: String, identityID: String) async throws(ServerFailure) {
        guard let id = FactorID.canonical(identityID) else {
            throw .notSent(url: authURL.absoluteString, detail: "an identity id is a UUID")
        }
        _ = try await send("DELETE", "user/identities/\(id)", query: nil, body: nil, bearer: accessToken)
    }

    /// `POST /sso` with `skip_http_redirect`: GoTrue answers the identity provider's URL as JSON.
    public func singleSignOnURL(_ target: SingleSignOnTarget, redirectTo: String, codeChallenge: String) async throws(ServerFailure) -> URL {
        var fields: [String: Any] = ["redirect_to": redirectTo, "code_challenge": codeChallenge, "code_challenge_method": "s256",
                                     "skip_http_redirect": true]
        switch target {
        case .domain(let domain): fields["domain"] = domain
        case .provider(let id): fields["provider_id"] = id
        }
        return try Self.answeredURL(try await send("POST", "sso", query: nil, body: try encode(fields)))
    }

    /// `{"url": …}`, as GoTrue answers a request with `skip_http_redirect`.
    private static func answeredURL(_ data: Data) throws(ServerFailure) -> URL {
        struct Answer: Decodable { var url: String }
        guard let answer = try? JSONDecoder().decode(Answer.self, from: data), let url = URL(string: answer.url), url.scheme != nil else {
            throw .invalidResponse(detail: "the answer carries no URL to open")
        }
        return url
    }

    /// `fields` with the link's PKCE challenge, when there is a link.
    static func adding(_ link: EmailLink?, to fields: [String: Any]) -> [String: Any] {
        guard let link else { return fields }
        var fields = fields
        fields["code_challenge"] = link.codeChallenge
        fields["code_challenge_method"] = "s256"
        return fields
    }

    /// `redirect_to` as a query parameter, where supabase's clients send it for `/otp`,
    /// `/signup`, `/recover` and `/resend`.
    private static func redirectQuery(_ link: EmailLink?) -> String? {
        link.map { query([URLQueryItem(name: "redirect_to", value: $0.redirectTo)]) }
    }

    /// A percent-encoded query; `+` encoded too, which GoTrue would read as a space.
    private static func query(_ items: [URLQueryItem]) -> String {
        var components = URLComponents()
        components.queryItems = items
        return (components.percentEncodedQuery ?? "").replacing("+", with: "%2B")
    }

    /// `fields` with `gotrue_meta_security.captcha_token`, where GoTrue's CAPTCHA check reads it,
    /// when there is a token; unchanged otherwise.
    static func adding(_ captchaToken: String?, to fields: [String: Any]) -> [String: Any] {
        guard let captchaToken else { return fields }
        var fields = fields
        fields["gotrue_meta_security"] = ["captcha_token": captchaToken]
        return fields
    }

    /// `GET /user`.
    public func user(accessToken: String) async throws(ServerFailure) -> UserRecord {
        try decodeUser(try await send("GET", "user", query: nil, body: nil, bearer: accessToken))
    }

    /// `PUT /user`.
    public func updateUser(accessToken: String, _ changes: UserChanges) async throws(ServerFailure) -> UserRecord {
        var fields: [String: Any] = [:]
        fields["email"] = changes.email
        fields["phone"] = changes.phone
        fields["password"] = changes.password
        fields["nonce"] = changes.nonce
        if let metadata = changes.metadata { fields["data"] = try jsonObject(metadata) }
        return try decodeUser(try await send("PUT", "user", query: nil, body: try encode(fields), bearer: accessToken))
    }

    /// `GET /reauthenticate`.
    public func reauthenticate(accessToken: String) async throws(ServerFailure) {
        _ = try await send("GET", "reauthenticate", query: nil, body: nil, bearer: accessToken)
    }

    /// `POST /factors`.
    public func enrollFactor(accessToken: String, _ request: FactorEnrollmentRequest) async throws(ServerFailure) -> FactorEnrollment {
        var fields: [String: Any] = ["factor_type": request.kind.rawValue]
        fields["friendly_name"] = request.friendlyName
        fields["issuer"] = request.issuer
        fields["phone"] = request.phone
        let data = try await send("POST", "factors", query: nil, body: try encode(fields), bearer: accessToken)
        guard let wire = try? JSONDecoder().decode(WireEnrollment.self, from: data), !wire.id.isEmpty else {
            throw .invalidResponse(detail: "the enrolled factor in the answer is incomplete")
        }
        let totp = wire.totp.flatMap { totp in totp.uri.map { TOTPSetup(uri: $0, secret: totp.secret ?? "", qrCode: totp.qr_code) } }
        if request.kind == .totp, totp == nil { throw .invalidResponse(detail: "the enrolled TOTP factor comes without its otpauth URI") }
        return FactorEnrollment(id: wire.id, type: wire.type ?? request.kind.rawValue, friendlyName: Self.nonEmpty(wire.friendly_name),
                                totp: totp, phone: Self.nonEmpty(wire.phone))
    }

    /// `POST /factors/{id}/challenge`.
    public func challengeFactor(accessToken: String, factorID: String, channel: String?) async throws(ServerFailure) -> FactorChallenge {
        var fields: [String: Any] = [:]
        fields["channel"] = channel
        let data = try await send("POST", try Self.factorPath(factorID, "challenge"), query: nil, body: try encode(fields), bearer: accessToken)
        guard let wire = try? JSONDecoder().decode(WireChallenge.self, from: data), !wire.id.isEmpty else {
            throw .invalidResponse(detail: "the challenge in the answer is incomplete")
        }
        return FactorChallenge(id: wire.id, type: wire.type ?? "", expiresAt: wire.expires_at?.value.map(Int64.init))
    }

    /// `POST /factors/{id}/verify`.
    public func verifyFactor(accessToken: String, factorID: String, challengeID: String, code: String) async throws(ServerFailure) -> SessionGrant {
        let body = try encode(["challenge_id": challengeID, "code": code])
        return try decodeGrant(try await send("POST", try Self.factorPath(factorID, "verify"), query: nil, body: body, bearer: accessToken))
    }

    /// `DELETE /factors/{id}`.
    public func unenrollFactor(accessToken: String, factorID: String) async throws(ServerFailure) {
        _ = try await send("DELETE", try Self.factorPath(factorID, nil), query: nil, body: nil, bearer: accessToken)
    }

    /// `factors/{id}[/action]`. The id goes into the path, so it must be a UUID, as GoTrue's are:
    /// nothing else can steer the request to another endpoint.
    static func factorPath(_ id: String, _ action: String?) throws(ServerFailure) -> String {
        guard let id = FactorID.canonical(id) else { throw .notSent(url: "factors", detail: "a factor id must be a UUID") }
        return "factors/\(id)" + (action.map { "/\($0)" } ?? "")
    }

    /// `GET /authorize` for a browser: the provider, where to come back, and the PKCE challenge.
    public func authorizeURL(provider: String, redirectTo: String, codeChallenge: String, scopes: String?) -> URL {
        var components = URLComponents(url: authURL.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false)!
        var items = [URLQueryItem(name: "provider", value: provider), URLQueryItem(name: "redirect_to", value: redirectTo),
                     URLQueryItem(name: "code_challenge", value: codeChallenge), URLQueryItem(name: "code_challenge_method", value: "s256")]
        if let scopes { items.append(URLQueryItem(name: "scopes", value: scopes)) }
        components.queryItems = items
        // URLComponents leaves `:` and `/` of the nested URL alone; GoTrue decodes either form, but
        // `+` would read as a space, so encode it.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacing("+", with: "%2B")
        return components.url!
    }

    /// `POST /token?grant_type=refresh_token`.
    public func refresh(refreshToken: String) async throws(ServerFailure) -> SessionGrant {
        let body = try encode(["refresh_token": refreshToken])
        return try decodeGrant(try await send("POST", "token", query: "grant_type=refresh_token", body: body))
    }

    /// `POST /logout?scope=…`.
    public func signOut(accessToken: String, scope: SignOutScope) async throws(ServerFailure) {
        _ = try await send("POST", "logout", query: "scope=\(scope.rawValue)", body: nil, bearer: accessToken)
    }

    /// `GET /health`; the server's `Date` header, parsed (nil when absent or not an HTTP date).
    public func health() async throws(ServerFailure) -> Date? {
        let (_, headers) = try await exchange("GET", "health", query: nil, body: nil)
        return headers.first(name: "Date").flatMap(HTTPDate.parse)
    }

    /// `GET /.well-known/jwks.json`, with its `Cache-Control`.
    public func keySet() async throws(ServerFailure) -> PublishedKeySet {
        let (data, headers) = try await exchange("GET", ".well-known/jwks.json", query: nil, body: nil)
        guard let keySet = try? JSONDecoder().decode(JSONWebKeySet.self, from: data) else {
            throw .invalidResponse(detail: "the project's JWKS is not a key set")
        }
        return PublishedKeySet(keySet: keySet, cacheControl: headers.first(name: "Cache-Control"))
    }

    // MARK: Plumbing

    private func jsonObject(_ data: Data) throws(ServerFailure) -> JSONValue {
        do { return try JSONValue(parsing: data) } catch {
            throw .invalidResponse(detail: "user data is not JSON")
        }
    }

    /// A request body: `object`'s members are strings, booleans, integers, JSON values or objects
    /// of these (the fields are written where they are sent, as the API names them).
    private func encode(_ object: [String: Any]) throws(ServerFailure) -> Data {
        guard let value = Self.jsonValue(object), let data = try? value.encoded() else {
            throw .notSent(url: authURL.absoluteString, detail: "the request could not be encoded")
        }
        return data
    }

    private static func jsonValue(_ any: Any) -> JSONValue? {
        switch any {
        case let value as JSONValue: return value
        case let string as String: return .string(string)
        case let bool as Bool: return .bool(bool)
        case let integer as Int: return .integer(Int64(integer))
        case let object as [String: Any]:
            var members: [String: JSONValue] = [:]
            for (key, member) in object {
                guard let value = jsonValue(member) else { return nil }
                members[key] = value
            }
            return .object(members)
        default: return nil
        }
    }

    private func send(_ method: String, _ path: String, query: String?, body: Data?, bearer: String? = nil) async throws(ServerFailure) -> Data {
        try await exchange(method, path, query: query, body: body, bearer: bearer).data
    }

    private func exchange(_ method: String, _ path: String, query: String?, body: Data?, bearer: String? = nil) async throws(ServerFailure) -> (data: Data, headers: HTTPHeaders) {
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

    /// The lifetimes of access tokens authd accepts, in seconds: GoTrue's `JWT_EXP` is an hour by
    /// default and a project can choose up to a week; a year leaves room for any real setting
    /// while keeping every date and duration computed from it small enough never to overflow.
    /// The lifetime is stored with the session, so an unchecked one would break every later start.
    public static let acceptedLifetimes = 1...Int(Session.maximumLifetime)

    private func decodeGrant(_ data: Data) throws(ServerFailure) -> SessionGrant {
        let wire: WireSession
        do { wire = try JSONDecoder().decode(WireSession.self, from: data) } catch {
            throw .invalidResponse(detail: "the session in the answer is incomplete")
        }
        guard let expiresIn = wire.expires_in?.value, Self.acceptedLifetimes.contains(expiresIn) else {
            throw .invalidResponse(detail: "the session's expires_in is not a whole number of seconds from 1 to 31536000 (a year)")
        }
        return SessionGrant(accessToken: wire.access_token, refreshToken: wire.refresh_token, expiresIn: expiresIn, user: wire.user.summary)
    }

    private func decodeUser(_ data: Data) throws(ServerFailure) -> UserRecord {
        guard let user = try? JSONDecoder().decode(WireUser.self, from: data) else {
            throw .invalidResponse(detail: "the user in the answer is incomplete")
        }
        return UserRecord(summary: user.summary, json: data)
    }

    private static func nonEmpty(_ string: String?) -> String? {
        guard let string, !string.isEmpty else { return nil }
        return string
    }

    private struct WireSession: Decodable {
        var access_token: String
        var refresh_token: String
        var expires_in: WireInteger?
        var user: WireUser
    }

    /// A JSON value that may be a whole number. Anything else (a fraction, a string, a number no
    /// integer type holds such as `1e400`) decodes to a nil `value` instead of failing the whole
    /// answer, so that the range check can say what is wrong.
    private struct WireInteger: Decodable {
        var value: Int?

        init(from decoder: any Decoder) {
            value = try? decoder.singleValueContainer().decode(Int.self)
        }
    }

    private struct WireUser: Decodable {
        var id: String
        var email: String?
        var phone: String?
        var factors: [Lenient<WireFactor>]?
        var is_anonymous: Bool?

        /// What authd keeps: the verified factors among those listed (GoTrue lists a user's
        /// factors with every user object once there are any).
        var summary: UserSummary {
            let verified = (factors ?? []).compactMap(\.value).filter { $0.status == "verified" }
                .map { FactorSummary(id: $0.id, type: $0.factor_type ?? "unknown", friendlyName: GoTrueClient.nonEmpty($0.friendly_name)) }
            return UserSummary(id: id, email: GoTrueClient.nonEmpty(email), phone: GoTrueClient.nonEmpty(phone), verifiedFactors: verified,
                               isAnonymous: is_anonymous ?? false)
        }
    }

    private struct WireFactor: Decodable {
        var id: String
        var factor_type: String?
        var status: String?
        var friendly_name: String?
    }

    /// An element that decodes to nil instead of failing the whole answer: one factor of a kind
    /// this client does not know must not make the session unreadable.
    private struct Lenient<Value: Decodable>: Decodable {
        var value: Value?
        init(from decoder: any Decoder) { value = try? Value(from: decoder) }
    }

    private struct WireEnrollment: Decodable {
        var id: String
        var type: String?
        var friendly_name: String?
        var phone: String?
        var totp: WireTOTP?
    }

    private struct WireTOTP: Decodable {
        var qr_code: String?
        var secret: String?
        var uri: String?
    }

    private struct WireChallenge: Decodable {
        var id: String
        var type: String?
        var expires_at: WireInteger?
    }
}
