import AuthCore
import FoundationEssentials

/// Sessions and tokens: the grants, sign-up, the codes and messages sent for them, sign-out,
/// and what the project publishes (its health, its signing keys).
extension GoTrueClient {
    /// `POST /token` (password, id_token, pkce, refresh_token), `POST /verify` (one-time code) or
    /// `POST /signup` (anonymous). The CAPTCHA token goes with the password grant and the
    /// anonymous sign-up only: GoTrue checks no other (id_token, pkce and refresh_token are
    /// exempt, `/verify` is not protected).
    public func signIn(_ credential: SignInCredential, captchaToken: String?) async throws(ServerFailure) -> SessionGrant {
        switch credential {
        case .password(let address, let password):
            let grant = RequestBody.PasswordGrant(email: address.email, phone: address.phone, password: password)
            let body = RequestBody.Guarded(body: grant, captchaToken: captchaToken)
            return try Answer.Session.grant(try await send("POST", "token", query: "grant_type=password", body: body))
        case .oneTimeCode(let address, let code, let type):
            let body = RequestBody.Verify(email: address.email, phone: address.phone, token: code, type: type.rawValue)
            return try Answer.Session.grant(try await send("POST", "verify", body: body))
        case .idToken(let provider, let idToken, let accessToken, let nonce):
            let body = RequestBody.IDTokenGrant(provider: provider, idToken: idToken, accessToken: accessToken, nonce: nonce)
            return try Answer.Session.grant(try await send("POST", "token", query: "grant_type=id_token", body: body))
        case .authorizationCode(let code, let verifier):
            let body = RequestBody.PKCEGrant(authCode: code, codeVerifier: verifier)
            return try Answer.Session.grant(try await send("POST", "token", query: "grant_type=pkce", body: body))
        case .tokenHash(let hash, let type):
            return try Answer.Session.grant(try await send("POST", "verify", body: RequestBody.Verify(tokenHash: hash, type: type.rawValue)))
        case .anonymous(let metadata):
            // Neither email nor phone is what makes GoTrue's /signup sign in anonymously.
            let body = RequestBody.Guarded(body: RequestBody.SignUp(data: try metadataValue(metadata)), captchaToken: captchaToken)
            return try Answer.Session.grant(try await send("POST", "signup", body: body))
        case .refreshToken(let refreshToken):
            return try await refresh(refreshToken: refreshToken)
        }
    }

    /// `POST /signup`: a session when the project confirms automatically, else the bare user.
    public func signUp(_ request: SignUpRequest, captchaToken: String?) async throws(ServerFailure) -> SignUpOutcome {
        let fields = RequestBody.SignUp(email: request.address.email, phone: request.address.phone, password: request.password,
                                data: try metadataValue(request.metadata))
        let data = try await send("POST", "signup", query: Self.redirectQuery(request.link),
                                  body: RequestBody.Guarded(body: fields, captchaToken: captchaToken, link: request.link))
        if Answer.Session.isSession(data) {
            return .signedIn(try Answer.Session.grant(data))
        }
        return .confirmationSent(try Answer.User.record(data).summary)
    }

    /// `POST /otp` (sign-in code, creating the user when asked) or `POST /recover`.
    public func sendCode(_ request: CodeRequest, captchaToken: String?, link: EmailLink?) async throws(ServerFailure) {
        switch request {
        case .signIn(let address, let createUser):
            let fields = RequestBody.OneTimeCode(email: address.email, phone: address.phone, createUser: createUser)
            let body = RequestBody.Guarded(body: fields, captchaToken: captchaToken, link: link)
            _ = try await send("POST", "otp", query: Self.redirectQuery(link), body: body)
        case .recovery(let email):
            _ = try await send("POST", "recover", query: Self.redirectQuery(link),
                               body: RequestBody.Guarded(body: RequestBody.Recover(email: email), captchaToken: captchaToken, link: link))
        }
    }

    /// `POST /resend`.
    public func resend(_ request: ResendRequest, captchaToken: String?, link: EmailLink?) async throws(ServerFailure) {
        let fields = RequestBody.Resend(email: request.address.email, phone: request.address.phone, type: request.purpose.rawValue)
        let body = RequestBody.Guarded(body: fields, captchaToken: captchaToken, link: link)
        _ = try await send("POST", "resend", query: Self.redirectQuery(link), body: body)
    }

    /// `POST /token?grant_type=refresh_token`.
    public func refresh(refreshToken: String) async throws(ServerFailure) -> SessionGrant {
        let body = RequestBody.RefreshGrant(refreshToken: refreshToken)
        return try Answer.Session.grant(try await send("POST", "token", query: "grant_type=refresh_token", body: body))
    }

    /// `POST /logout?scope=…`.
    public func signOut(accessToken: String, scope: SignOutScope) async throws(ServerFailure) {
        _ = try await send("POST", "logout", query: "scope=\(scope.rawValue)", bearer: accessToken)
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
}
