import Crypto
import Foundation

/// One identity of a user, as GoTrue's `identities` row and its JSON.
struct DevIdentity: Sendable {
    /// `identity_id` in the JSON (GoTrue's primary key, a UUID).
    var id: String
    /// `email`, `phone`, an OAuth provider (`github`, …) or `sso:<SSO provider id>`.
    var provider: String
    /// `id` in the JSON: the provider's subject (GoTrue's `provider_id`); the user's own id for
    /// the `email` and `phone` identities.
    var providerID: String
    var userID: String
    /// `identity_data` as JSON, so that the store stays `Sendable`.
    var identityDataJSON: Data
    /// The identity's email (GoTrue derives the column from `identity_data`); empty when none.
    var email: String
    var createdAt: Date
    var updatedAt: Date
    var lastSignInAt: Date?

    /// `identity_data` decoded.
    var identityData: [String: Any] {
        (try? JSONSerialization.jsonObject(with: identityDataJSON)) as? [String: Any] ?? [:]
    }

    /// GoTrue's `IsEmailVerified`: only an explicit `email_verified: true` counts.
    var isEmailVerified: Bool { identityData["email_verified"] as? Bool == true }

    /// The identity as the user JSON lists it; `email` and `last_sign_in_at` are left out when
    /// empty, as GoTrue's `omitempty` does.
    var json: [String: Any] {
        var json: [String: Any] = [
            "identity_id": id, "id": providerID, "user_id": userID, "identity_data": identityData, "provider": provider,
            "created_at": DevAuthAPI.timestamp(createdAt), "updated_at": DevAuthAPI.timestamp(updatedAt),
        ]
        if let lastSignInAt { json["last_sign_in_at"] = DevAuthAPI.timestamp(lastSignInAt) }
        if !email.isEmpty { json["email"] = email }
        return json
    }
}

/// A manual link on its way through the simulated provider: made by
/// `GET /user/identities/authorize`, used up by the `GET /callback` it points to.
struct DevLinkFlow: Sendable {
    /// The `state` the provider sends back (GoTrue uses its flow state's id).
    var id: String
    var provider: String
    var codeChallenge: String
    /// Where the browser goes afterwards, already checked against the allow list.
    var redirectTo: String
    /// GoTrue's `linking_target_id`: the signed-in user who asked for the link.
    var targetUserID: String
    var createdAt: Date
}

/// Manual linking and enterprise SSO, kept in `DevStore.linking`.
struct DevLinkingState: Sendable {
    /// GoTrue's `SECURITY_MANUAL_LINKING_ENABLED`. Off in GoTrue's default project, on here so
    /// that the development server can show linking; `POST /admin/dev/settings {"manual_linking"}`.
    var manualLinking = true
    /// Link flows waiting for their callback, by state id.
    var linkFlows: [String: DevLinkFlow] = [:]
    /// States whose callback already linked (GoTrue's used flow state answers differently from
    /// an unknown one).
    var usedLinkStates: Set<String> = []
    /// GoTrue's `SAML_ENABLED`: off (as in GoTrue's default project) until an SSO provider is
    /// registered through `POST /admin/dev/sso`; `POST /admin/dev/settings {"saml_enabled"}`.
    var samlEnabled = false
    /// Registered SSO providers by id (`DevSSO.swift`).
    var ssoProviders: [String: DevSSOProvider] = [:]
    /// SAML relay states of sign-ins on their way through the simulated IdP, by id.
    var relayStates: [String: DevRelayState] = [:]
}

extension DevUser {
    /// The user's identities as GoTrue lists them, grouped by provider in `providers` order:
    /// a provider's records, or for `email` and `phone` without one the identity GoTrue made at
    /// sign-up or confirmation, derived from the user. An anonymous user has none.
    var identities: [DevIdentity] {
        providers.flatMap { provider -> [DevIdentity] in
            let records = identityRecords.filter { $0.provider == provider }
            return records.isEmpty ? [derivedIdentity(provider)] : records
        }
    }

    /// The `email` or `phone` identity GoTrue keeps for this user. Its id is derived from the
    /// user's id and the provider, so that it stays the same from one answer to the next (and can
    /// be unlinked by it); its data follow the user's confirmations.
    func derivedIdentity(_ provider: String) -> DevIdentity {
        var data: [String: Any] = ["sub": id, "email_verified": false, "phone_verified": false]
        var identityEmail = ""
        if provider == "phone" {
            data["phone"] = phone
            data["phone_verified"] = phoneConfirmedAt != nil
        } else {
            identityEmail = email
            if !email.isEmpty { data["email"] = email }
            data["email_verified"] = emailConfirmedAt != nil
        }
        return DevIdentity(id: Self.stableUUID("\(id)/\(provider)"), provider: provider, providerID: id, userID: id,
                           identityDataJSON: (try? JSONSerialization.data(withJSONObject: data)) ?? Data("{}".utf8),
                           email: identityEmail, createdAt: createdAt, updatedAt: updatedAt, lastSignInAt: createdAt)
    }

    /// Adds an identity and its provider; GoTrue then rewrites `app_metadata`'s providers.
    mutating func addIdentity(_ identity: DevIdentity) {
        identityRecords.append(identity)
        if !providers.contains(identity.provider) { providers.append(identity.provider) }
        appMetadataListsProviders = true
    }

    /// Removes an identity (a record, or a derived one by its provider); the provider goes from
    /// `providers` with its last identity.
    mutating func removeIdentity(_ identity: DevIdentity) {
        identityRecords.removeAll { $0.id == identity.id }
        if !identityRecords.contains(where: { $0.provider == identity.provider }) {
            providers.removeAll { $0 == identity.provider }
        }
        appMetadataListsProviders = true
    }

    /// A sign-in through the identity `provider`/`subject`: both it and the user were last used now.
    mutating func recordSignIn(provider: String, subject: String, now: Date) {
        if let index = identityRecords.firstIndex(where: { $0.provider == provider && $0.providerID == subject }) {
            identityRecords[index].lastSignInAt = now
            identityRecords[index].updatedAt = now
        }
        lastSignInAt = now
    }

    /// A UUID-shaped (version 4 bits) digest of `seed`, for ids that must not change.
    static func stableUUID(_ seed: String) -> String {
        var bytes = Array(SHA256.hash(data: Data(seed.utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let cuts = [8, 12, 16, 20]
        var parts: [String] = []
        var start = hex.startIndex
        for cut in cuts {
            let end = hex.index(hex.startIndex, offsetBy: cut)
            parts.append(String(hex[start..<end]))
            start = end
        }
        parts.append(String(hex[start...]))
        return parts.joined(separator: "-")
    }
}

extension DevStore {
    /// The user who has the identity `provider`/`subject` (GoTrue's `FindIdentityByIdAndProvider`).
    func identityOwner(provider: String, subject: String) -> DevUser? {
        users.values.first { $0.identityRecords.contains { $0.provider == provider && $0.providerID == subject } }
    }
}

extension DevSession {
    /// The `amr` claim for `user`: GoTrue names the SSO provider in an `sso/saml` entry when the
    /// user's only identity is that provider's (`CalculateAALAndAMR`).
    func amrClaim(for user: DevUser) -> [[String: Any]] {
        let identities = user.identities
        guard identities.count == 1, identities[0].provider.hasPrefix("sso:") else { return amrClaim }
        let providerID = String(identities[0].provider.dropFirst("sso:".count))
        return amrClaim.map { entry in
            guard entry["method"] as? String == "sso/saml" else { return entry }
            return entry.merging(["provider": providerID]) { _, named in named }
        }
    }
}

/// Manual identity linking, as GoTrue has it (`identity.go`, and the link branch of `external.go`):
///
/// - `GET /user/identities/authorize?provider=…&redirect_to=…&code_challenge=…&code_challenge_method=s256[&skip_http_redirect=true][&scopes=…]`
///   with a Bearer token answers `{"url": …}` (with `skip_http_redirect=true`) or a 302 to that
///   URL: `<external URL>/auth/v1/callback?state=<uuid>`, where the simulated provider sends the
///   browser back at once (it consents on the spot, as for `/authorize`, and signs in the
///   `email` of `POST /admin/dev/oauth`, or `<provider>-user@example.com`). That `GET /callback`
///   adds the provider's identity to the user who asked and redirects to `redirect_to?code=…`,
///   which the `pkce` grant exchanges for a session of that same user (`amr` `oauth`).
///   Refusals there travel in the redirect as GoTrue's `redirectErrors` put them (query and
///   fragment): `identity_already_exists` when the provider identity is linked already.
/// - `DELETE /user/identities/{identity_id}` with a Bearer token unlinks; GoTrue's checks in its
///   order: a non-UUID id is 404 `validation_failed`, a user with one identity (or none) 422
///   `single_identity_not_deletable`, an id the user lacks 422 `identity_not_found`. Unlinking
///   the phone identity clears the phone; unlinking another makes the email follow the identities
///   left (`UpdateUserEmailFromIdentities`).
/// - Both answer 404 `manual_linking_disabled` when the dev setting `manual_linking` is off.
///
/// Not modelled: the implicit flow (PKCE only, as `/authorize`), several identities of one
/// OAuth provider being linked by hand to one user, and unverified provider emails.
extension DevAuthAPI {
    /// The routes of this file and `DevSSO.swift`.
    static func isIdentityOrSSORoute(_ path: String) -> Bool {
        path == "/user/identities/authorize" || path.hasPrefix("/user/identities/") || path == "/callback"
            || path == "/sso" || path == "/admin/dev/sso" || path.hasPrefix("/admin/dev/idp/")
    }

    /// Routes manual linking, SSO and their admin endpoints.
    func identitiesAndSSO(_ request: DevRequest, path: String, now: Date) -> DevResponse {
        let identityPrefix = "/user/identities/"
        switch (request.method, path) {
        case ("GET", "/user/identities/authorize"):
            return authenticated(request, now: now) { user, _ in linkIdentity(user: user, request: request, now: now) }
        case ("DELETE", let target) where target.hasPrefix(identityPrefix):
            return authenticated(request, now: now) { user, _ in
                deleteIdentity(String(target.dropFirst(identityPrefix.count)), user: user, request: request, now: now)
            }
        case ("GET", "/callback"):
            return linkCallback(request, now: now)
        case ("POST", "/sso"):
            return singleSignOn(request, now: now)
        case ("GET", let target) where target.hasPrefix("/admin/dev/idp/"):
            return identityProviderPage(request, providerID: String(target.dropFirst("/admin/dev/idp/".count)), now: now)
        case ("POST", "/admin/dev/sso"):
            return withBody(request) { registerSSOProvider($0, request: request, now: now) }
        default:
            return DevError.response(405, "method_not_allowed", "Method not allowed", request: request)
        }
    }

    /// `manual_linking` and `saml_enabled` of `POST /admin/dev/settings`.
    func changeLinkingSettings(_ body: [String: Any]) {
        if let manual = body["manual_linking"] as? Bool { state.withLock { $0.linking.manualLinking = manual } }
        if let saml = body["saml_enabled"] as? Bool { state.withLock { $0.linking.samlEnabled = saml } }
    }

    /// The subject the simulated OAuth provider gives an email address: the same as the `sub` of
    /// an ID token minted without one, so that both ways of signing in find the same identity.
    static func providerSubject(_ provider: String, email: String) -> String {
        "dev-\(provider)-\(email.lowercased())"
    }

    /// The identity the simulated provider's claims make (GoTrue stores the provider's claims as
    /// `identity_data`; the fake provider always vouches for the email).
    func oauthIdentity(provider: String, subject: String, email: String, userID: String, now: Date) -> DevIdentity {
        let issuers = DevIDTokenIssuer.issuers.merging(["github": "https://api.github.com"]) { known, _ in known }
        var data: [String: Any] = ["sub": subject, "provider_id": subject, "email_verified": true, "phone_verified": false]
        if let issuer = issuers[provider] { data["iss"] = issuer }
        if !email.isEmpty { data["email"] = email }
        return DevIdentity(id: UUID().uuidString.lowercased(), provider: provider, providerID: subject, userID: userID,
                           identityDataJSON: (try? JSONSerialization.data(withJSONObject: data)) ?? Data("{}".utf8),
                           email: email, createdAt: now, updatedAt: now, lastSignInAt: now)
    }

    /// `GET /user/identities/authorize` for the Bearer's `user`.
    func linkIdentity(user: DevUser, request: DevRequest, now: Date) -> DevResponse {
        guard state.withLock({ $0.linking.manualLinking }) else {
            return DevError.response(404, "manual_linking_disabled", "Manual linking is disabled", request: request)
        }
        let provider = request.query["provider"] ?? ""
        guard Self.oauthProviders.contains(provider) else {
            return DevError.response(400, "validation_failed", "Unsupported provider: provider \(provider.prefix(64)) is not enabled", request: request)
        }
        let challenge = request.query["code_challenge"] ?? ""
        let method = request.query["code_challenge_method"] ?? ""
        if challenge.isEmpty != method.isEmpty {
            return DevError.response(400, "validation_failed", "PKCE flow requires code_challenge_method and code_challenge", request: request)
        }
        guard !challenge.isEmpty, method.lowercased() == "s256" else {
            return DevError.response(400, "validation_failed", "The development server supports the PKCE flow only: code_challenge and code_challenge_method=s256 are required", request: request)
        }
        let flow = DevLinkFlow(id: UUID().uuidString.lowercased(), provider: provider, codeChallenge: challenge,
                               redirectTo: acceptedRedirect(request.query["redirect_to"]), targetUserID: user.id, createdAt: now)
        state.withLock { $0.linking.linkFlows[flow.id] = flow }
        let url = "\(options.externalURL)/auth/v1/callback?state=\(flow.id)"
        if request.query["skip_http_redirect"] == "true" { return .json(200, ["url": url]) }
        return DevResponse(status: 302, headers: ["Location": url])
    }

    /// `GET /callback?state=…`: where the simulated provider sends the browser of a link. State
    /// problems are JSON errors (GoTrue's middleware answers them); the link's own are redirects.
    func linkCallback(_ request: DevRequest, now: Date) -> DevResponse {
        guard let stateID = request.query["state"], !stateID.isEmpty else {
            return DevError.response(400, "bad_oauth_callback", "OAuth state parameter missing", request: request)
        }
        guard let uuid = UUID(uuidString: stateID) else {
            return DevError.response(400, "bad_oauth_state", "OAuth state parameter is invalid", request: request)
        }
        let id = uuid.uuidString.lowercased()
        return state.withLock { store -> DevResponse in
            if store.linking.usedLinkStates.contains(id) {
                return DevError.response(400, "flow_state_already_used", "State has already been used", request: request)
            }
            guard let flow = store.linking.linkFlows[id] else {
                return DevError.response(400, "bad_oauth_state", "OAuth state not found or expired", request: request)
            }
            if now.timeIntervalSince(flow.createdAt) > Self.flowStateLifetime {
                store.linking.linkFlows[id] = nil
                return DevError.response(400, "bad_oauth_state", "OAuth state has expired", request: request)
            }
            guard let target = store.users[flow.targetUserID] else {
                return DevError.response(422, "user_not_found", "Linking target user not found", request: request)
            }
            // The simulated provider's step, as on /authorize: a scripted refusal, else consent.
            if let error = store.provider.error {
                store.provider.error = nil
                var items = [URLQueryItem(name: "error", value: error.error)]
                if let code = error.code { items.append(URLQueryItem(name: "error_code", value: code)) }
                if let description = error.description { items.append(URLQueryItem(name: "error_description", value: description)) }
                return Self.redirect(to: flow.redirectTo, adding: items)
            }
            let email = store.provider.email ?? "\(flow.provider)-user@example.com"
            let subject = Self.providerSubject(flow.provider, email: email)
            if let owner = store.identityOwner(provider: flow.provider, subject: subject) {
                let message = owner.id == target.id ? "Identity is already linked" : "Identity is already linked to another user"
                return Self.errorRedirect(to: flow.redirectTo, status: 422, code: "identity_already_exists", message: message)
            }
            var linked = target
            linked.addIdentity(oauthIdentity(provider: flow.provider, subject: subject, email: email, userID: target.id, now: now))
            if linked.email.isEmpty {
                // GoTrue gives a user without an email (an anonymous one) the linked identity's,
                // which the provider verified, and so makes it permanent.
                guard Self.updateEmailFromIdentities(&linked, store: &store) else {
                    return Self.errorRedirect(to: flow.redirectTo, status: 400, code: "email_exists",
                                              message: "A user with this email address has already been registered")
                }
                linked.emailConfirmedAt = now
                linked.isAnonymous = false
            }
            linked.updatedAt = now
            store.users[linked.id] = linked
            store.linking.linkFlows[id] = nil
            store.linking.usedLinkStates.insert(id)
            // The code counts from the start of the flow, as GoTrue's flow state does.
            let authCode = UUID().uuidString.lowercased()
            store.flowStates[authCode] = DevFlowState(authCode: authCode, provider: flow.provider, codeChallenge: flow.codeChallenge,
                                                      email: email, createdAt: flow.createdAt, userID: linked.id,
                                                      authenticationMethod: "oauth")
            return Self.redirect(to: flow.redirectTo, adding: [URLQueryItem(name: "code", value: authCode)])
        }
    }

    /// `DELETE /user/identities/{identity_id}` for the Bearer's `user`; answers `{}`.
    func deleteIdentity(_ rawID: String, user: DevUser, request: DevRequest, now: Date) -> DevResponse {
        guard state.withLock({ $0.linking.manualLinking }) else {
            return DevError.response(404, "manual_linking_disabled", "Manual linking is disabled", request: request)
        }
        guard let uuid = UUID(uuidString: rawID) else {
            return DevError.response(404, "validation_failed", "identity_id must be an UUID", request: request)
        }
        return state.withLock { store -> DevResponse in
            guard let current = store.users[user.id] else {
                return DevError.response(404, "user_not_found", "User not found", request: request)
            }
            let identities = current.identities
            guard identities.count > 1 else {
                return DevError.response(422, "single_identity_not_deletable", "User must have at least 1 identity after unlinking", request: request)
            }
            guard let doomed = identities.first(where: { $0.id == uuid.uuidString.lowercased() }) else {
                return DevError.response(422, "identity_not_found", "Identity doesn't exist", request: request)
            }
            var updated = current
            updated.removeIdentity(doomed)
            if doomed.provider == "phone" {
                updated.phone = ""
                updated.phoneConfirmedAt = nil
            } else if !Self.updateEmailFromIdentities(&updated, store: &store) {
                return DevError.response(422, "email_conflict_identity_not_deletable", "Unable to unlink identity due to email conflict", request: request)
            }
            updated.updatedAt = now
            store.users[updated.id] = updated
            return .json(200, [String: Any]())
        }
    }

    /// GoTrue's `UpdateUserEmailFromIdentities`: keeps the email while an identity has it, else
    /// moves to the best identity's (verified email first, then unverified, then none; oldest
    /// first) whose email no other user has, dropping pending changes and codes, and unconfirms a
    /// promoted email nobody vouched for. False when every candidate email is taken.
    static func updateEmailFromIdentities(_ user: inout DevUser, store: inout DevStore) -> Bool {
        let identities = user.identities
        // An identity without an email "has" an empty one, so a phone user keeps no email: GoTrue's quirk.
        if identities.contains(where: { $0.email == user.email }) { return true }
        func rank(_ identity: DevIdentity) -> Int { identity.email.isEmpty ? 2 : identity.isEmailVerified ? 0 : 1 }
        let ordered = identities.sorted { a, b in
            if rank(a) != rank(b) { return rank(a) < rank(b) }
            if a.createdAt != b.createdAt { return a.createdAt < b.createdAt }
            return a.id < b.id
        }
        guard let primary = ordered.first(where: { store.user(email: $0.email).map { $0.id == user.id } ?? true }) else { return false }
        user.email = primary.email
        user.newEmail = nil
        user.newPhone = nil
        let userID = user.id
        store.codes = store.codes.filter { $0.value.userID != userID }
        if primary.email.isEmpty || (!primary.isEmailVerified && !store.mailerAutoconfirm) {
            user.emailConfirmedAt = nil
        }
        return true
    }

    /// GoTrue's `redirectErrors`: the error in the query of `target` and again in its fragment
    /// (with `sb`), in Go's form encoding. `error` is the OAuth name of the status.
    static func errorRedirect(to target: String, status: Int, code: String, message: String) -> DevResponse {
        let oauthNames = [400: "invalid_request", 401: "unauthorized_client", 403: "access_denied", 500: "server_error", 503: "temporarily_unavailable"]
        let fields = ["error": oauthNames[status] ?? "server_error", "error_code": code, "error_description": message]
        var components = URLComponents(string: target) ?? URLComponents()
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        query.merge(fields) { _, error in error }
        components.fragment = nil
        components.query = nil
        let base = components.string ?? target
        let fragment = formEncoded(fields.merging(["sb": ""]) { kept, _ in kept })
        return DevResponse(status: 302, headers: ["Location": base + "?" + formEncoded(query) + "#" + fragment])
    }

    /// Go's `url.Values.Encode`: keys sorted, `QueryEscape`d (a space is `+`).
    static func formEncoded(_ values: [String: String]) -> String {
        let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~ ")
        func escape(_ text: String) -> String {
            (text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text).replacingOccurrences(of: " ", with: "+")
        }
        return values.keys.sorted().map { "\(escape($0))=\(escape(values[$0] ?? ""))" }.joined(separator: "&")
    }

    /// GoTrue's `IsSSOUser` rule of `PUT /user`: the IdP owns an SSO user's email, phone and
    /// password, so changing one (or presenting a reauthentication nonce) is 422 `user_sso_managed`.
    func ssoManagedRefusal(_ user: DevUser, body: [String: Any], newEmail: String?, newPhone: String?, request: DevRequest) -> DevResponse? {
        guard user.isSSOUser else { return nil }
        let password = body["password"] as? String ?? ""
        let nonce = body["nonce"] as? String ?? ""
        let changes = !password.isEmpty || (newEmail.map { $0 != user.email } ?? false)
            || (newPhone.map { $0 != user.phone } ?? false) || !nonce.isEmpty
        guard changes else { return nil }
        return DevError.response(422, "user_sso_managed", "Updating email, phone, password of a SSO account only possible via SSO", request: request)
    }
}
