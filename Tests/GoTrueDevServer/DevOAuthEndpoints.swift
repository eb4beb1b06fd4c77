import Crypto
import Foundation

/// Browser sign-in with PKCE: `/authorize` for a simulated provider that sends the browser
/// straight back, and the `pkce` grant.
extension DevAuthAPI {
    /// The OAuth providers the development project has enabled.
    static let oauthProviders = ["apple", "github", "google"]
    /// GoTrue keeps a flow state this long.
    static let flowStateLifetime: TimeInterval = 300

    /// `GET /authorize?provider=…&redirect_to=…&code_challenge=…&code_challenge_method=s256`.
    /// The simulated provider consents at once and the browser is redirected to `redirect_to`
    /// with `?code=` (or with `?error=…` after `POST /admin/dev/oauth {"error":…}`).
    func authorize(_ request: DevRequest, now: Date) -> DevResponse {
        let provider = request.query["provider"] ?? ""
        guard Self.oauthProviders.contains(provider) else {
            return DevError.response(400, "validation_failed", "Unsupported provider: provider \(provider.prefix(64)) is not enabled", request: request)
        }
        guard let challenge = request.query["code_challenge"], !challenge.isEmpty,
              request.query["code_challenge_method"]?.lowercased() == "s256" else {
            return DevError.response(400, "validation_failed", "The development server supports the PKCE flow only: code_challenge and code_challenge_method=s256 are required", request: request)
        }
        let redirect = acceptedRedirect(request.query["redirect_to"])
        return state.withLock { store -> DevResponse in
            if let error = store.provider.error {
                store.provider.error = nil
                var items = [URLQueryItem(name: "error", value: error.error)]
                if let code = error.code { items.append(URLQueryItem(name: "error_code", value: code)) }
                if let description = error.description { items.append(URLQueryItem(name: "error_description", value: description)) }
                return Self.redirect(to: redirect, adding: items)
            }
            let authCode = UUID().uuidString.lowercased()
            store.flowStates[authCode] = DevFlowState(authCode: authCode, provider: provider, codeChallenge: challenge,
                                                      email: store.provider.email ?? "\(provider)-user@example.com", createdAt: now)
            return Self.redirect(to: redirect, adding: [URLQueryItem(name: "code", value: authCode)])
        }
    }

    /// `POST /token?grant_type=pkce {"auth_code","code_verifier"}`.
    func pkceGrant(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        guard let authCode = body["auth_code"] as? String, !authCode.isEmpty,
              let verifier = body["code_verifier"] as? String, !verifier.isEmpty else {
            return DevError.response(400, "validation_failed", "invalid request: both auth code and code verifier should be non-empty", request: request)
        }
        return state.withLock { store -> DevResponse in
            // The code of a clicked email link (`DevEmailLinks.swift`), checked in GoTrue's order.
            if let emailFlow = store.emailFlowStates.first(where: { $0.authCode == authCode }) {
                return emailLinkGrant(emailFlow, verifier: verifier, request: request, store: &store, now: now)
            }
            guard let flow = store.flowStates[authCode] else {
                return DevError.response(404, "flow_state_not_found", "invalid flow state, no valid flow state found", request: request)
            }
            if now.timeIntervalSince(flow.createdAt) > Self.flowStateLifetime {
                store.flowStates[authCode] = nil
                return DevError.response(400, "flow_state_expired", "flow state has expired", request: request)
            }
            let challenge = JWTSigner.base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
            guard challenge == flow.codeChallenge else {
                return DevError.response(403, "bad_code_verifier", "code challenge does not match previously saved code verifier", request: request)
            }
            store.flowStates[authCode] = nil
            var user: DevUser
            if let userID = flow.userID {
                // A link or an SSO sign-in settled the user before the redirect, as GoTrue's flow state records.
                guard let settled = store.users[userID] else {
                    return DevError.response(404, "user_not_found", "User not found", request: request)
                }
                user = settled
                user.lastSignInAt = now
                store.users[user.id] = user
            } else {
                user = linkedUser(email: flow.email, provider: flow.provider, store: &store, now: now)
            }
            var session = issueSession(for: user, method: flow.authenticationMethod, store: &store, now: now)
            // Only an OAuth provider hands out tokens of its own; a SAML IdP has none.
            if flow.authenticationMethod == "oauth" {
                session["provider_token"] = "dev-provider-token-\(Self.randomToken())"
                session["provider_refresh_token"] = "dev-provider-refresh-\(Self.randomToken())"
            }
            return .json(200, session)
        }
    }

    /// `POST /admin/dev/oauth {"email"?, "error"?, "error_code"?, "error_description"?}`: who the
    /// simulated provider signs in, or the error it sends the next browser back with (on
    /// `/authorize` and on a link's `/callback` alike).
    func setProviderBehaviour(_ body: [String: Any]) -> DevResponse {
        state.withLock { store in
            if let email = body["email"] as? String { store.provider.email = email.lowercased() }
            if let error = body["error"] as? String {
                store.provider.error = (error, body["error_code"] as? String, body["error_description"] as? String)
            }
        }
        return DevResponse(status: 204)
    }

    /// A loopback IP literal or an allow-listed URL; anything else falls back to the site URL,
    /// as GoTrue does with a `redirect_to` it does not accept.
    func acceptedRedirect(_ wanted: String?) -> String {
        guard let wanted, let url = URLComponents(string: wanted), let scheme = url.scheme?.lowercased() else { return options.externalURL }
        let host = (url.host ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if scheme == "http", host.hasPrefix("127.") || host == "::1" { return wanted }
        if options.redirectAllowList.contains(where: { wanted.lowercased().hasPrefix($0.lowercased()) }) { return wanted }
        return options.externalURL
    }

    static func redirect(to target: String, adding items: [URLQueryItem]) -> DevResponse {
        var query = URLComponents()
        query.queryItems = items
        let encoded = (query.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let separator = target.contains("?") ? "&" : "?"
        return DevResponse(status: 302, headers: ["Location": target + separator + encoded])
    }
}
