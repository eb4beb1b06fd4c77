import Foundation

/// An enterprise SSO provider registered through `POST /admin/dev/sso`, with the simulated
/// SAML identity provider behind it.
struct DevSSOProvider: Sendable {
    /// GoTrue's SSO provider id (a UUID); users' identities name it as `sso:<id>`.
    var id: String
    /// Email domains that pick this provider on `POST /sso`, lower-cased.
    var domains: [String]
    /// The IdP's SAML entity id (the `iss` of its identities' data).
    var entityID: String
    /// Who the simulated IdP signs in when a browser reaches its page.
    var email: String
    /// The SAML NameID (persistent subject) the IdP gives that person; nil means the email.
    var nameID: String?
    var createdAt: Date
    /// What `POST /sso` answers instead of the simulated IdP's page: a server's odd answer, for
    /// tests of what its clients open.
    var loginURL: String?

    /// The provider as the admin endpoint answers it.
    var json: [String: Any] {
        ["id": id, "domains": domains, "entity_id": entityID, "email": email, "name_id": nameID ?? email,
         "created_at": DevAuthAPI.timestamp(createdAt)]
    }
}

/// A SAML relay state (GoTrue's `saml_relay_states` row with its flow state): made by
/// `POST /sso`, used up when the browser reaches the simulated IdP's page.
struct DevRelayState: Sendable {
    var id: String
    var providerID: String
    /// `redirect_to` as sent; GoTrue checks it against the allow list only after the assertion.
    var redirectTo: String?
    var codeChallenge: String
    var createdAt: Date
}

/// Enterprise SSO as GoTrue has it with SAML (`sso.go`, `samlacs.go`), with a simulated IdP:
///
/// - `POST /sso {"domain" | "provider_id", "redirect_to"?, "code_challenge", "code_challenge_method",
///   "skip_http_redirect"?}` answers `{"url": …}` (with `skip_http_redirect: true`) or a 303 to
///   it: `<external URL>/auth/v1/admin/dev/idp/<provider id>?SAMLRequest=<id>&RelayState=<uuid>`.
///   Refusals in GoTrue's order: SAML off 404 `saml_provider_disabled`; a `provider_id` that is
///   not a UUID 400 `bad_json`; both or neither of `domain`/`provider_id` 400
///   `validation_failed`; unknown ones 404 `sso_provider_not_found`; then the PKCE parameters.
/// - A `GET` of that URL, as the browser makes it, is the IdP signing in the provider's `email`
///   and GoTrue's ACS taking the assertion at once: the SSO user of that provider is found
///   (by its identity, else by email among that provider's users) or created (`is_sso_user`,
///   kept apart from non-SSO users with the same email; its identity `sso:<provider id>` with
///   the NameID as `id`; `app_metadata.provider` `sso:<provider id>`), and the browser goes to
///   `redirect_to?code=…` (302). The `pkce` grant gives a session whose `amr` is
///   `{"method": "sso/saml", "provider": "<provider id>"}`. ACS failures go to the site URL with
///   `error`, `error_code` and `error_description` (303), as GoTrue sends them.
/// - `POST /admin/dev/sso {"domains": […], "email": …, "name_id"?, "entity_id"?, "login_url"?}` registers a
///   provider and turns SAML on; with `"id"` of a registered one it changes who its IdP signs in
///   (or its domains). Answers the provider JSON (`id`, `domains`, `entity_id`, `email`,
///   `name_id`, `created_at`).
///
/// Not modelled: the implicit flow, IdP-initiated sign-ins, real SAML messages and metadata,
/// and GoTrue's admin API for SSO providers (`/admin/sso/providers`).
extension DevAuthAPI {
    /// GoTrue's `SAML_RELAY_STATE_VALIDITY_PERIOD` default.
    static let relayStateLifetime: TimeInterval = 120

    /// `POST /sso`.
    func singleSignOn(_ request: DevRequest, now: Date) -> DevResponse {
        guard state.withLock({ $0.linking.samlEnabled }) else {
            return DevError.response(404, "saml_provider_disabled", "SAML 2.0 is disabled", request: request)
        }
        return withBody(request) { body in
            if let refusal = Self.ssoBodyRefusal(body, request: request) { return refusal }
            // GoTrue's zero UUID is no provider id.
            let providerID = (body["provider_id"] as? String).flatMap(UUID.init(uuidString:)).map { $0.uuidString.lowercased() }
                .flatMap { $0 == "00000000-0000-0000-0000-000000000000" ? nil : $0 }
            let domain = body["domain"] as? String ?? ""
            if providerID != nil, !domain.isEmpty {
                return DevError.response(400, "validation_failed", "Only one of provider_id or domain supported", request: request)
            }
            if providerID == nil, domain.isEmpty {
                return DevError.response(400, "validation_failed", "A provider_id or domain needs to be provided", request: request)
            }
            let provider = state.withLock { store in
                providerID.flatMap { store.linking.ssoProviders[$0] }
                    ?? (domain.isEmpty ? nil : store.linking.ssoProviders.values.first { $0.domains.contains(domain) })
            }
            guard let provider else {
                return DevError.response(404, "sso_provider_not_found", providerID != nil ? "No such SSO provider" : "No SSO provider assigned for this domain",
                                         request: request)
            }
            let challenge = body["code_challenge"] as? String ?? ""
            let method = body["code_challenge_method"] as? String ?? ""
            if challenge.isEmpty != method.isEmpty {
                return DevError.response(400, "validation_failed", "PKCE flow requires code_challenge_method and code_challenge", request: request)
            }
            guard !challenge.isEmpty, method.lowercased() == "s256" else {
                return DevError.response(400, "validation_failed", "The development server supports the PKCE flow only: code_challenge and code_challenge_method=s256 are required", request: request)
            }
            let relay = DevRelayState(id: UUID().uuidString.lowercased(), providerID: provider.id, redirectTo: body["redirect_to"] as? String,
                                      codeChallenge: challenge, createdAt: now)
            state.withLock { $0.linking.relayStates[relay.id] = relay }
            let url = provider.loginURL
                ?? "\(options.externalURL)/auth/v1/admin/dev/idp/\(provider.id)?SAMLRequest=_\(UUID().uuidString.lowercased())&RelayState=\(relay.id)"
            if body["skip_http_redirect"] as? Bool == true { return .json(200, ["url": url]) }
            return DevResponse(status: 303, headers: ["Location": url])
        }
    }

    /// GoTrue decodes `POST /sso` into typed fields: a field of the wrong type, or a
    /// `provider_id` that is no UUID, is 400 `bad_json` with Go's message.
    private static func ssoBodyRefusal(_ body: [String: Any], request: DevRequest) -> DevResponse? {
        func badJSON(_ detail: String) -> DevResponse {
            DevError.response(400, "bad_json", "Could not parse request body as JSON: \(detail)", request: request)
        }
        for field in ["domain", "redirect_to", "code_challenge", "code_challenge_method"] where body[field] != nil && !(body[field] is String) {
            return badJSON("json: cannot unmarshal \(goType(body[field])) into Go struct field SingleSignOnParams.\(field) of type string")
        }
        if let skip = body["skip_http_redirect"], !isJSONBool(skip) {
            return badJSON("json: cannot unmarshal \(goType(skip)) into Go struct field SingleSignOnParams.skip_http_redirect of type bool")
        }
        guard let raw = body["provider_id"] else { return nil }
        guard let text = raw as? String else {
            return badJSON("json: cannot unmarshal \(goType(raw)) into Go struct field SingleSignOnParams.provider_id of type uuid.UUID")
        }
        if UUID(uuidString: text) != nil { return nil }
        // gofrs/uuid's texts: a length it knows with bad characters, or a length it does not.
        if [32, 36, 38, 41, 45].contains(text.utf8.count) { return badJSON("uuid: incorrect UUID format in string \"\(text.prefix(64))\"") }
        return badJSON("uuid: incorrect UUID length \(text.utf8.count) in string \"\(text.prefix(64))\"")
    }

    /// Whether a decoded JSON value was `true` or `false` (Foundation decodes `1` to an
    /// `NSNumber` that also casts to `Bool`; only a JSON boolean has the `char` type).
    private static func isJSONBool(_ value: Any) -> Bool {
        (value as? NSNumber).map { String(cString: $0.objCType) == "c" } ?? false
    }

    /// The JSON type name Go's decoder reports for a value.
    private static func goType(_ value: Any?) -> String {
        switch value {
        case let flag? where isJSONBool(flag): return "bool"
        case is NSNumber: return "number"
        case is String: return "string"
        case is [Any]: return "array"
        default: return "object"
        }
    }

    /// `GET /admin/dev/idp/<provider id>?RelayState=…`: the simulated IdP signs in its
    /// provider's `email` and hands the assertion to GoTrue's ACS behaviour at once.
    func identityProviderPage(_ request: DevRequest, providerID: String, now: Date) -> DevResponse {
        let siteURL = options.externalURL
        let relayID = (request.query["RelayState"] ?? "").lowercased()
        guard UUID(uuidString: relayID) != nil else {
            return Self.siteErrorRedirect(siteURL, status: 400, code: "validation_failed", message: "SAML RelayState is not a valid UUID or URL")
        }
        return state.withLock { store -> DevResponse in
            guard let relay = store.linking.relayStates[relayID] else {
                return Self.siteErrorRedirect(siteURL, status: 404, code: "saml_relay_state_not_found", message: "SAML RelayState does not exist, try logging in again?")
            }
            store.linking.relayStates[relayID] = nil
            if now.timeIntervalSince(relay.createdAt) >= Self.relayStateLifetime {
                return Self.siteErrorRedirect(siteURL, status: 422, code: "saml_relay_state_expired", message: "SAML RelayState has expired. Try logging in again?")
            }
            // An assertion from another IdP than the request went to fails GoTrue's checks.
            guard let provider = store.linking.ssoProviders[relay.providerID], provider.id == providerID.lowercased() else {
                return Self.siteErrorRedirect(siteURL, status: 400, code: "validation_failed", message: "SAML Assertion is not valid")
            }
            let user = ssoUser(provider: provider, store: &store, now: now)
            let authCode = UUID().uuidString.lowercased()
            store.flowStates[authCode] = DevFlowState(authCode: authCode, provider: "sso/saml", codeChallenge: relay.codeChallenge,
                                                      email: user.email, createdAt: relay.createdAt, userID: user.id,
                                                      authenticationMethod: "sso/saml")
            return Self.redirect(to: acceptedRedirect(relay.redirectTo), adding: [URLQueryItem(name: "code", value: authCode)])
        }
    }

    /// GoTrue's account linking for an SSO sign-in, where the provider is its own linking
    /// domain: the user with this identity; else that provider's user with the email, who gets
    /// the identity; else a new, confirmed SSO user.
    private func ssoUser(provider: DevSSOProvider, store: inout DevStore, now: Date) -> DevUser {
        let providerType = "sso:\(provider.id)"
        let subject = provider.nameID ?? provider.email
        if var owner = store.identityOwner(provider: providerType, subject: subject) {
            owner.recordSignIn(provider: providerType, subject: subject, now: now)
            store.users[owner.id] = owner
            return owner
        }
        let data: [String: Any] = ["iss": provider.entityID, "sub": subject, "email": provider.email,
                                   "email_verified": true, "phone_verified": false]
        let dataJSON = (try? JSONSerialization.data(withJSONObject: data)) ?? Data("{}".utf8)
        var user = store.users.values.first { candidate in
            candidate.identityRecords.contains { $0.provider == providerType && $0.email == provider.email }
        } ?? DevUser(id: UUID().uuidString.lowercased(), email: provider.email, passwordDigest: "", userMetadataJSON: dataJSON,
                     createdAt: now, updatedAt: now, lastSignInAt: nil, providers: [])
        user.isSSOUser = true
        user.addIdentity(DevIdentity(id: UUID().uuidString.lowercased(), provider: providerType, providerID: subject, userID: user.id,
                                     identityDataJSON: dataJSON, email: provider.email, createdAt: now, updatedAt: now, lastSignInAt: now))
        user.emailConfirmedAt = user.emailConfirmedAt ?? now
        user.lastSignInAt = now
        store.users[user.id] = user
        return user
    }

    /// GoTrue's `SamlAcs` failure: a 303 to the site URL with the error in its query.
    private static func siteErrorRedirect(_ siteURL: String, status: Int, code: String, message: String) -> DevResponse {
        var answer = errorRedirect(to: siteURL, status: status, code: code, message: message)
        answer.status = 303
        // No fragment here: SamlAcs puts the error in the query only.
        answer.headers["Location"] = answer.headers["Location"].map { String($0.prefix { $0 != "#" }) }
        return answer
    }

    /// `POST /admin/dev/sso`: registers a provider (`domains`, `email`, optional `name_id`,
    /// `entity_id` and `login_url`, the address `POST /sso` answers instead of the IdP's page) and
    /// turns SAML on, or with `id` changes a registered one.
    func registerSSOProvider(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        let email = (body["email"] as? String).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if let email, !Self.looksLikeEmail(email) {
            return DevError.response(400, "validation_failed", "email must be the address the IdP signs in", request: request)
        }
        let domains = (body["domains"] as? [String])?.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if let domains, domains.contains(where: \.isEmpty) {
            return DevError.response(400, "validation_failed", "domains must not be empty strings", request: request)
        }
        return state.withLock { store -> DevResponse in
            var provider: DevSSOProvider
            if let id = body["id"] as? String {
                guard let known = store.linking.ssoProviders[id.lowercased()] else {
                    return DevError.response(404, "sso_provider_not_found", "No such SSO provider", request: request)
                }
                provider = known
            } else {
                guard let email else {
                    return DevError.response(400, "validation_failed", "email (the address the IdP signs in) is required", request: request)
                }
                let id = UUID().uuidString.lowercased()
                provider = DevSSOProvider(id: id, domains: [], entityID: "\(options.externalURL)/auth/v1/admin/dev/idp/\(id)",
                                          email: email, nameID: nil, createdAt: now)
            }
            if let email { provider.email = email }
            if let nameID = body["name_id"] as? String { provider.nameID = nameID.isEmpty ? nil : nameID }
            if let entityID = body["entity_id"] as? String, !entityID.isEmpty { provider.entityID = entityID }
            if let loginURL = body["login_url"] as? String { provider.loginURL = loginURL.isEmpty ? nil : loginURL }
            if let domains {
                // GoTrue gives a domain to one provider only.
                if let taken = domains.first(where: { domain in store.linking.ssoProviders.values.contains { $0.id != provider.id && $0.domains.contains(domain) } }) {
                    return DevError.response(400, "validation_failed", "SSO Domain '\(taken)' is already assigned to an SSO identity provider", request: request)
                }
                provider.domains = domains
            }
            store.linking.ssoProviders[provider.id] = provider
            store.linking.samlEnabled = true
            return .json(200, provider.json)
        }
    }
}
