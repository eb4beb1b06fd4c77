import Foundation
import Synchronization

/// The development server's endpoints: request in, response out, with the time passed in.
///
/// Faithful to GoTrue where authd and the official clients can tell the difference: the session
/// JSON, the JWT claims, both error formats, and refresh-token rotation as GoTrue does it for its
/// v2 (counter) refresh tokens: the parent of the current token is always answered with the
/// current one; an older revoked token too, but only while the session's last refresh is less
/// than the reuse interval away (and that answer counts as a refresh); otherwise the whole
/// session is deleted with `refresh_token_already_used`.
///
/// MFA (`DevMFAEndpoints.swift`): `POST /factors` enrolls a TOTP or phone factor,
/// `POST /factors/{id}/challenge` and `POST /factors/{id}/verify` raise the session to `aal2`
/// (new refresh token, other `aal1` sessions of the user ended), `DELETE /factors/{id}` unenrolls.
/// Sessions carry `aal` and `amr`; the user object lists `factors`. The dev setting
/// `allow_low_aal` (seconds) ends sessions left at `aal1` by a user who has a verified factor.
///
/// Anonymous sign-ins (`DevAnonymousUsers.swift`): `POST /signup` without an email or phone, when
/// the dev setting `anonymous_users` is on (the default here; GoTrue's default project has it off).
///
/// Email links (`DevEmailLinks.swift`): PKCE for `/otp`, `/signup`, `/recover` and `/resend`,
/// each email's `link` and `token_hash` in the outbox, the click (`GET /verify`), `POST /verify`
/// with a `token_hash`, and `POST /resend`.
///
/// Linked identities (`DevIdentities.swift`): the user object's `identities`,
/// `GET /user/identities/authorize` through the simulated provider's `GET /callback`, and
/// `DELETE /user/identities/{id}`, under the dev setting `manual_linking` (on here). Enterprise
/// SSO (`DevSSO.swift`): `POST /sso` through a simulated SAML IdP page; `POST /admin/dev/sso`
/// registers providers.
public final class DevAuthAPI: Sendable {
    let state: Mutex<DevStore>
    let options: DevServerOptions
    let signer: JWTSigner
    let issuer: String
    /// The test OpenID provider whose ID tokens the `id_token` grant trusts.
    let idTokenIssuer = DevIDTokenIssuer()

    /// Creates the API with empty state.
    public init(options: DevServerOptions) {
        self.options = options
        self.signer = JWTSigner(secret: options.jwtSecret, algorithm: JWTSigner.Algorithm(rawValue: options.signingAlgorithm) ?? .hs256)
        self.issuer = options.externalURL + "/auth/v1"
        var store = DevStore()
        store.mailerAutoconfirm = options.mailerAutoconfirm
        store.captchaToken = options.captchaToken
        store.anonymousUsers = options.anonymousUsers
        self.state = Mutex(store)
    }

    /// Routes one request.
    public func handle(_ request: DevRequest, now: Date = Date()) -> DevResponse {
        var path = request.path
        if path.hasPrefix("/auth/v1") { path.removeFirst("/auth/v1".count) }
        if path.count > 1, path.hasSuffix("/") { path.removeLast() }
        if !path.hasPrefix("/admin/dev") {
            // Counted for tests that must prove a request never reached the server.
            state.withLock { $0.requestCounts["\(request.method) \(path)", default: 0] += 1 }
        }
        // Browsers reach /authorize (and the provider's /callback) without an apikey header: the
        // Supabase gateway leaves those routes open, and so does this server.
        // The JWKS is public too, as on Supabase, and so is GET /verify: an email's link is opened
        // by a browser or mail client that has no apikey.
        let openRoute = path.hasPrefix("/admin/dev") || (request.method == "GET" && ["/authorize", "/callback", "/.well-known/jwks.json", "/verify"].contains(path))
        if let anonKey = options.anonKey, !openRoute, request.headers["apikey"] != anonKey {
            return .json(401, ["message": "Invalid API key", "hint": "Double check your Supabase `anon` or `service_role` API key."])
        }
        if let refusal = captchaRefusal(request, path: path) { return refusal }
        switch (request.method, path) {
        case ("GET", "/health"):
            return .json(200, ["version": "v2.180.0-authd-dev", "name": "GoTrue",
                               "description": "GoTrue is a user registration and authentication API"])
        case ("GET", "/settings"):
            return .json(200, settings())
        case ("GET", "/.well-known/jwks.json"):
            // GoTrue's header: caches keep the set ten minutes.
            return .json(200, signer.keySet(), headers: ["Cache-Control": "public, max-age=600"])
        case ("POST", "/admin/dev/rotate-signing-key"):
            return withBody(request) { body in
                guard let kid = signer.rotate(retiringOthers: body["retire_others"] as? Bool ?? false) else {
                    return DevError.response(400, "validation_failed", "an HS256 project has no signing keys to rotate (start with --signing-algorithm ES256 or RS256)", request: request)
                }
                return .json(200, ["kid": kid])
            }
        case ("POST", "/signup"):
            return withBody(request) { signUp($0, request: request, now: now) }
        case ("POST", "/token"):
            return withBody(request) { token($0, request: request, now: now) }
        case ("GET", "/user"):
            return authenticated(request, now: now) { user, _ in .json(200, userJSON(user)) }
        case ("PUT", "/user"):
            return authenticated(request, now: now) { user, sessionID in
                withBody(request) { updateUser($0, user: user, sessionID: sessionID, request: request, now: now) }
            }
        case ("GET", "/reauthenticate"):
            return authenticated(request, now: now) { user, _ in reauthenticate(user: user, request: request, now: now) }
        case ("POST", "/otp"):
            return withBody(request) { sendOneTimeCode($0, request: request, now: now) }
        case ("GET", "/verify"):
            return verifyLink(request, now: now)
        case ("POST", "/verify"):
            return withBody(request) { verify($0, request: request, now: now) }
        case ("POST", "/recover"):
            return withBody(request) { recover($0, request: request, now: now) }
        case ("POST", "/resend"):
            return withBody(request) { resend($0, request: request, now: now) }
        case ("GET", "/authorize"):
            return authorize(request, now: now)
        case (_, let factorPath) where factorPath == "/factors" || factorPath.hasPrefix("/factors/"):
            return factors(request, path: factorPath, now: now)
        case (_, let linkingPath) where Self.isIdentityOrSSORoute(linkingPath):
            return identitiesAndSSO(request, path: linkingPath, now: now)
        case ("GET", "/admin/dev/outbox"):
            return outbox(request)
        case ("POST", "/admin/dev/settings"):
            return withBody(request) { changeSettings($0, request: request) }
        case ("POST", "/admin/dev/oauth"):
            return withBody(request) { setProviderBehaviour($0) }
        case ("POST", "/admin/dev/id_token"):
            return withBody(request) { mintIDToken($0, request: request, now: now) }
        case ("POST", "/logout"):
            return authenticated(request, now: now) { user, sessionID in logout(request, user: user, sessionID: sessionID) }
        case ("POST", "/admin/dev/faults"):
            return withBody(request) { body in
                guard let fault = DevFault(json: body) else {
                    return DevError.response(400, "validation_failed", "a fault needs a status between 400 and 599, \"drop\": true, a positive \"delay\" or \"expires_in\", and a \"grant\" of refresh_token (the default) or password", request: request)
                }
                state.withLock { $0.refreshFault = fault }
                return DevResponse(status: 204)
            }
        case ("DELETE", "/admin/dev/faults"):
            state.withLock { $0.refreshFault = nil }
            return DevResponse(status: 204)
        case ("POST", "/admin/dev/revoke"):
            // Ends every session of a user, as an admin (or a password change elsewhere) would:
            // their refresh tokens are gone and the next refresh gets `refresh_token_not_found`.
            return withBody(request) { body in
                let email = body["email"] as? String ?? ""
                let revoked = state.withLock { store -> Int? in
                    guard let user = store.user(email: email) else { return nil }
                    let ids = store.sessions.values.filter { $0.userID == user.id }.map(\.id)
                    ids.forEach { store.deleteSession($0) }
                    return ids.count
                }
                guard let revoked else { return DevError.response(404, "user_not_found", "User not found", request: request) }
                return .json(200, ["revoked_sessions": revoked])
            }
        case ("GET", "/admin/dev/stats"):
            return .json(200, state.withLock {
                ["refresh_grants": $0.refreshGrants, "sessions": $0.sessions.count, "users": $0.users.count, "requests": $0.requestCounts]
            })
        default:
            if ["/health", "/settings", "/signup", "/token", "/user", "/logout", "/otp", "/verify", "/recover", "/resend", "/authorize", "/reauthenticate"].contains(path) {
                return DevError.response(405, "method_not_allowed", "Method not allowed", request: request)
            }
            return DevError.response(404, "not_found", "Not found", request: request)
        }
    }

    /// GoTrue's CAPTCHA check, for a project that has one: before the handler, on sign-up,
    /// `/otp`, `/magiclink`, `/recover`, `/resend` and `/token` with any grant but the exempt
    /// `refresh_token`, `pkce` and `id_token`. A missing token and a refused one are both 400
    /// `captcha_failed`, with GoTrue's texts.
    private func captchaRefusal(_ request: DevRequest, path: String) -> DevResponse? {
        guard request.method == "POST", let accepted = state.withLock({ $0.captchaToken }) else { return nil }
        switch path {
        case "/signup", "/otp", "/magiclink", "/recover", "/resend": break
        // GoTrue checks that SAML is on before the CAPTCHA of `POST /sso`.
        case "/sso" where state.withLock({ $0.linking.samlEnabled }): break
        case "/token" where !["refresh_token", "pkce", "id_token"].contains(request.query["grant_type"] ?? ""): break
        default: return nil
        }
        // GoTrue's check decodes the body itself: no body, one that is not a JSON object, or
        // fields of the wrong type are its `bad_json`; `null` counts as absent.
        let badJSON = DevError.response(400, "bad_json", "Could not parse request body as JSON: invalid JSON", request: request)
        guard let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] else { return badJSON }
        var security: [String: Any] = [:]
        switch body["gotrue_meta_security"] {
        case nil, is NSNull: break
        case let object as [String: Any]: security = object
        default: return badJSON
        }
        var token = ""
        switch security["captcha_token"] {
        case nil, is NSNull: break
        case let text as String: token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        default: return badJSON
        }
        if token.isEmpty {
            return DevError.response(400, "captcha_failed", "captcha protection: request disallowed (no captcha_token found)", request: request)
        }
        guard token == accepted else {
            return DevError.response(400, "captcha_failed", "captcha protection: request disallowed (invalid-input-response)", request: request)
        }
        return nil
    }

    // MARK: Endpoints

    private func settings() -> [String: Any] {
        var external: [String: Any] = ["email": true, "phone": true, "anonymous_users": state.withLock { $0.anonymousUsers }]
        for provider in Self.oauthProviders { external[provider] = true }
        return ["external": external, "disable_signup": false, "mailer_autoconfirm": state.withLock { $0.mailerAutoconfirm },
                "phone_autoconfirm": false, "sms_provider": "dev-outbox", "saml_enabled": state.withLock { $0.linking.samlEnabled }]
    }

    private func signUp(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        // GoTrue's router looks at the fields as sent: neither an email nor a phone (an empty
        // string is neither) is an anonymous sign-in, whatever else the body holds.
        if Self.isAbsent(body["email"]), Self.isAbsent(body["phone"]) {
            return signUpAnonymously(body, request: request, now: now)
        }
        let phone = Self.phone(in: body)
        let email = Self.email(in: body) ?? ""
        if phone.isEmpty, !Self.looksLikeEmail(email) {
            return DevError.response(400, "validation_failed", "Unable to validate email address: invalid format", request: request)
        }
        recordSecrets([body["password"] as? String])
        guard let password = body["password"] as? String, password.count >= 6 else {
            return DevError.response(422, "weak_password", "Password should be at least 6 characters.", request: request,
                                     extra: ["weak_password": ["reasons": ["length"]]])
        }
        // GoTrue answers a phone sign-up's tokens in the body, so it refuses PKCE there; then the
        // PKCE fields' own checks (`DevEmailLinks.swift`).
        if !phone.isEmpty, !Self.isAbsent(body["code_challenge"]) {
            return DevError.response(400, "validation_failed", "PKCE not supported for phone signups", request: request)
        }
        let pkce = Self.pkceChallenge(in: body, request: request)
        if let refusal = pkce.refusal { return refusal }
        let link = linkOptions(request, pkce: pkce.challenge)
        let metadata = body["data"] as? [String: Any] ?? [:]
        return state.withLock { store -> DevResponse in
            if (!phone.isEmpty && store.user(phone: phone) != nil) || (phone.isEmpty && store.user(email: email) != nil) {
                return DevError.response(422, "user_already_exists", "User already registered", request: request)
            }
            var user = DevUser(id: UUID().uuidString.lowercased(), email: phone.isEmpty ? email : "", phone: phone,
                               passwordDigest: Self.digest(password),
                               userMetadataJSON: (try? JSONSerialization.data(withJSONObject: metadata)) ?? Data("{}".utf8),
                               createdAt: now, updatedAt: now, lastSignInAt: nil, providers: [phone.isEmpty ? "email" : "phone"])
            // Phone numbers are always confirmed by SMS; email addresses only when the project asks.
            if phone.isEmpty, store.mailerAutoconfirm {
                user.emailConfirmedAt = now
                user.lastSignInAt = now
                store.users[user.id] = user
                return .json(200, issueSession(for: user, method: "password", store: &store, now: now))
            }
            if phone.isEmpty, let challenge = pkce.challenge {
                // Made in GoTrue's sign-up transaction: an unknown method leaves no user behind.
                guard challenge.method != nil else { return Self.unexpectedFailure(request) }
                keepEmailFlowState(userID: user.id, method: "email/signup", challenge: challenge, store: &store, now: now)
            }
            store.users[user.id] = user
            sendCode(to: user, purpose: phone.isEmpty ? "email" : "sms", type: "signup", link: link, store: &store, now: now)
            var bare = userJSON(user)
            bare["confirmation_sent_at"] = Self.timestamp(now)
            return .json(200, bare)
        }
    }

    private func token(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        switch request.query["grant_type"] {
        case "password": return passwordGrant(body, request: request, now: now)
        case "refresh_token": return refreshGrant(body, request: request, now: now)
        case "id_token": return idTokenGrant(body, request: request, now: now)
        case "pkce": return pkceGrant(body, request: request, now: now)
        default:
            return DevError.response(400, "validation_failed", "unsupported_grant_type", request: request)
        }
    }

    private func passwordGrant(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        let email = body["email"] as? String ?? ""
        let phone = body["phone"] as? String ?? ""
        let password = body["password"] as? String ?? ""
        recordSecrets([password])
        return state.withLock { store -> DevResponse in
            let fault = takeFault(for: "password", store: &store)
            if let fault, let failure = fault.response(to: request) { return failure }
            var answer = passwordSession(email: email, phone: phone, password: password, request: request, store: &store, now: now)
            answer.delay = max(answer.delay, fault?.delay ?? 0)
            return fault?.applyingExpiresIn(to: answer) ?? answer
        }
    }

    private func passwordSession(email: String, phone: String, password: String, request: DevRequest,
                                 store: inout DevStore, now: Date) -> DevResponse {
        guard var user = phone.isEmpty ? store.user(email: email) : store.user(phone: phone),
              user.passwordDigest == Self.digest(password) else {
            return DevError.response(400, "invalid_credentials", "Invalid login credentials", request: request)
        }
        if phone.isEmpty, user.emailConfirmedAt == nil {
            return DevError.response(400, "email_not_confirmed", "Email not confirmed", request: request)
        }
        if !phone.isEmpty, user.phoneConfirmedAt == nil {
            return DevError.response(400, "phone_not_confirmed", "Phone not confirmed", request: request)
        }
        user.lastSignInAt = now
        store.users[user.id] = user
        return .json(200, issueSession(for: user, method: "password", store: &store, now: now))
    }

    private func refreshGrant(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        guard let presented = body["refresh_token"] as? String, !presented.isEmpty else {
            return DevError.response(400, "validation_failed", "refresh_token required", request: request)
        }
        return state.withLock { store -> DevResponse in
            store.refreshGrants += 1
            let fault = takeFault(for: "refresh_token", store: &store)
            if let fault, let failure = fault.response(to: request) { return failure }
            var answer = rotate(presented, request: request, store: &store, now: now)
            answer.delay = max(answer.delay, fault?.delay ?? 0)
            return fault?.applyingExpiresIn(to: answer) ?? answer
        }
    }

    /// The injected fault for a grant of type `grant`, if one is set; counts it against its `count`.
    func takeFault(for grant: String, store: inout DevStore) -> DevFault? {
        guard let fault = store.refreshFault, fault.grant == grant else { return nil }
        if let remaining = fault.remaining {
            store.refreshFault?.remaining = remaining - 1
            if remaining <= 1 { store.refreshFault = nil }
        }
        return fault
    }

    /// GoTrue's rotation rules for a presented refresh token.
    private func rotate(_ presented: String, request: DevRequest, store: inout DevStore, now: Date) -> DevResponse {
        guard let row = store.refreshTokens[presented], let session = store.sessions[row.sessionID],
              let user = store.users[session.userID] else {
            return DevError.response(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found", request: request)
        }
        // GoTrue checks the session's validity before it looks at which token was presented.
        if store.isLowAALExpired(session, user: user, now: now) {
            return DevError.response(400, "session_expired", "Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)", request: request)
        }
        guard row.revokedAt != nil else {
            // The current token: rotate it.
            store.refreshTokens[presented]?.revokedAt = now
            store.sessions[session.id]?.refreshedAt = now
            let child = newRefreshToken(session: session.id, parent: presented, store: &store, now: now)
            var answer = DevResponse.json(200, sessionJSON(user: user, session: session, refreshToken: child, store: store, now: now))
            answer.delay = options.refreshResponseDelay
            return answer
        }
        let active = store.activeToken[session.id]
        // GoTrue's "fail-to-save" cause: the token one step behind, however late. A session
        // whose current token came from an MFA verification has no such parent in a client's
        // hands (`DevMFAEndpoints.raiseSession`).
        let isParentOfActive = active.flatMap { store.refreshTokens[$0]?.parent } == presented
        // GoTrue's "concurrent-refresh" cause: any older token, while the session's last refresh
        // is less than the reuse interval away, either side (it is not when the token was revoked).
        let withinReuseInterval = abs(now.timeIntervalSince(session.lastRefreshedAt)) < options.reuseInterval
        if let active, isParentOfActive || withinReuseInterval {
            // Answered with the current token, not a new one; GoTrue records it as a refresh,
            // which moves the reuse window on.
            store.sessions[session.id]?.refreshedAt = now
            return .json(200, sessionJSON(user: user, session: session, refreshToken: active, store: store, now: now))
        }
        // Reuse of an old token: treat it as stolen and end the whole session.
        store.deleteSession(session.id)
        return DevError.response(400, "refresh_token_already_used", "Invalid Refresh Token: Already Used", request: request)
    }

    private func logout(_ request: DevRequest, user: DevUser, sessionID: String) -> DevResponse {
        let scope = request.query["scope"] ?? "global"
        guard ["global", "local", "others"].contains(scope) else {
            return DevError.response(400, "validation_failed", "Unsupported logout scope \"\(scope.prefix(32))\"", request: request)
        }
        state.withLock { store in
            let userSessions = store.sessions.values.filter { $0.userID == user.id }.map(\.id)
            for id in userSessions where scope == "global" || (scope == "local") == (id == sessionID) {
                store.deleteSession(id)
            }
        }
        return DevResponse(status: 204)
    }

    // MARK: Helpers

    func withBody(_ request: DevRequest, _ body: ([String: Any]) -> DevResponse) -> DevResponse {
        if request.body.isEmpty { return body([:]) }
        guard let object = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] else {
            return DevError.response(400, "bad_json", "Could not parse request body as JSON: invalid JSON", request: request)
        }
        return body(object.filter { !($0.value is NSNull) })
    }

    func authenticated(_ request: DevRequest, now: Date, _ body: (DevUser, String) -> DevResponse) -> DevResponse {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer "),
              case let token = String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces), !token.isEmpty else {
            return DevError.response(401, "no_authorization", "This endpoint requires a valid Bearer token", request: request)
        }
        guard let claims = signer.verify(token) else {
            return DevError.response(403, "bad_jwt", "invalid JWT: unable to parse or verify signature, signature is invalid", request: request)
        }
        guard let exp = (claims["exp"] as? NSNumber)?.doubleValue, exp > now.timeIntervalSince1970 else {
            return DevError.response(403, "bad_jwt", "invalid JWT: unable to parse or verify signature, token has invalid claims: token is expired", request: request)
        }
        let lookup = state.withLock { store -> (user: DevUser?, session: Bool, lowAALExpired: Bool) in
            let sessionID = claims["session_id"] as? String ?? ""
            let user = store.users[claims["sub"] as? String ?? ""]
            let session = store.sessions[sessionID]
            let expired = user.flatMap { user in session.map { store.isLowAALExpired($0, user: user, now: now) } } ?? false
            return (user, session != nil, expired)
        }
        guard let user = lookup.user else {
            return DevError.response(403, "user_not_found", "User from sub claim in JWT does not exist", request: request)
        }
        guard lookup.session else {
            return DevError.response(403, "session_not_found", "Session from session_id claim in JWT does not exist", request: request)
        }
        // GoTrue's requireAuthentication checks the session's validity on every Bearer endpoint.
        if lookup.lowAALExpired {
            return DevError.response(403, "session_expired", "Session is no longer valid", request: request)
        }
        return body(user, claims["session_id"] as? String ?? "")
    }

    /// A new session for `user`, at `aal1`; `method` is its first `amr` entry.
    func issueSession(for user: DevUser, method: String, store: inout DevStore, now: Date) -> [String: Any] {
        let session = DevSession(id: UUID().uuidString.lowercased(), userID: user.id, createdAt: now,
                                 amr: [DevAMREntry(method: method, timestamp: now)])
        store.sessions[session.id] = session
        let refreshToken = newRefreshToken(session: session.id, parent: nil, store: &store, now: now)
        return sessionJSON(user: user, session: session, refreshToken: refreshToken, store: store, now: now)
    }

    /// Issues the session's new current refresh token, rotated from `parent`.
    func newRefreshToken(session: String, parent: String?, store: inout DevStore, now: Date) -> String {
        let token = Self.randomToken()
        store.refreshTokens[token] = DevRefreshToken(token: token, sessionID: session, parent: parent, issuedAt: now, revokedAt: nil)
        store.activeToken[session] = token
        return token
    }

    /// The session answer of every grant (and of an MFA verification), with an access token whose
    /// `aal` and `amr` come from the session. A low-AAL session's token expires no later than its
    /// `allow_low_aal` allowance, as GoTrue shortens it.
    func sessionJSON(user: DevUser, session: DevSession, refreshToken: String, store: DevStore, now: Date) -> [String: Any] {
        let issuedAt = Int(now.timeIntervalSince1970)
        var expiresAt = issuedAt + options.accessTokenLifetime
        if let cap = store.lowAALExpiry(session, user: user) { expiresAt = min(expiresAt, Int(cap.timeIntervalSince1970)) }
        let claims: [String: Any] = [
            "iss": issuer, "sub": user.id, "aud": "authenticated", "exp": expiresAt, "iat": issuedAt,
            "email": user.email, "phone": user.phone, "role": "authenticated", "aal": session.claimedAAL,
            "amr": session.amrClaim(for: user), "session_id": session.id, "is_anonymous": user.isAnonymous,
            "app_metadata": appMetadata(user), "user_metadata": userMetadata(user),
        ]
        let accessToken = signer.sign(claims)
        recordSecrets([accessToken, refreshToken])
        return ["access_token": accessToken, "token_type": "bearer", "expires_in": expiresAt - issuedAt,
                "expires_at": expiresAt, "refresh_token": refreshToken, "user": userJSON(user)]
    }

    /// Notes secrets for the end-to-end suite's scan (`DevServerOptions.secretsFile`).
    func recordSecrets(_ secrets: [String?]) {
        guard let path = options.secretsFile else { return }
        let file = LineFile(path: path)
        for case let secret? in secrets where !secret.isEmpty { file.append(Data(secret.utf8)) }
    }

    private func appMetadata(_ user: DevUser) -> [String: Any] {
        guard user.appMetadataListsProviders else { return [:] }
        return ["provider": user.providers.first ?? "email", "providers": user.providers]
    }

    private func userMetadata(_ user: DevUser) -> [String: Any] {
        if user.signedUpAnonymously {
            // No identity data was ever copied in; GoTrue's email confirmation adds only this.
            return user.emailConfirmedAt == nil ? user.userMetadata : user.userMetadata.merging(["email_verified": true]) { _, fixed in fixed }
        }
        return user.userMetadata.merging(["email": user.email, "email_verified": user.emailConfirmedAt != nil,
                                          "phone_verified": user.phoneConfirmedAt != nil, "sub": user.id]) { _, fixed in fixed }
    }

    /// The user object as GoTrue answers it (every field the official clients require).
    func userJSON(_ user: DevUser) -> [String: Any] {
        let created = Self.timestamp(user.createdAt)
        let identities = user.identities.map(\.json)
        var json: [String: Any] = [
            "id": user.id, "aud": "authenticated", "role": "authenticated", "email": user.email, "phone": user.phone,
            "app_metadata": appMetadata(user), "user_metadata": userMetadata(user), "identities": identities,
            "created_at": created, "updated_at": Self.timestamp(user.updatedAt), "is_anonymous": user.isAnonymous,
        ]
        if let confirmed = user.emailConfirmedAt { json["email_confirmed_at"] = Self.timestamp(confirmed) }
        if let confirmed = user.phoneConfirmedAt { json["phone_confirmed_at"] = Self.timestamp(confirmed) }
        if let confirmed = user.emailConfirmedAt ?? user.phoneConfirmedAt { json["confirmed_at"] = Self.timestamp(confirmed) }
        if let newEmail = user.newEmail { json["new_email"] = newEmail }
        if let newPhone = user.newPhone { json["new_phone"] = newPhone }
        if let last = user.lastSignInAt { json["last_sign_in_at"] = Self.timestamp(last) }
        // GoTrue's `omitempty`: a user without factors has no `factors` key at all.
        if !user.factors.isEmpty { json["factors"] = user.factors.map(\.json) }
        return json
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    static func digest(_ password: String) -> String {
        // A development server only: a fast hash is enough to keep plain passwords out of memory dumps.
        JWTSigner.base64URL(Data(SHA256Digest.hash(password)))
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<22).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] })
    }

    static func looksLikeEmail(_ text: String) -> Bool {
        text.range(of: #"^[^@\s]+@[^@\s]+\.[^@\s]+$"#, options: .regularExpression) != nil
    }
}
