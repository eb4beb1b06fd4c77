import Foundation

/// Anonymous sign-ins, as GoTrue has them:
///
/// - `POST /signup` with neither `email` nor `phone` creates a user with no email, phone or
///   password, `is_anonymous: true`, the body's `data` as `user_metadata`, an empty
///   `app_metadata` and no identities, and answers a session whose `amr` is `anonymous`. With the
///   setting `anonymous_users` off (`POST /admin/dev/settings`) it is 422
///   `anonymous_provider_disabled`. The CAPTCHA, when the project has one, applies as to any
///   sign-up (checked before routing).
/// - Such a user becomes permanent, keeping its id, once an email or phone change is confirmed
///   (`PUT /user`, `POST /verify` of type `email_change` or `phone_change`); until then
///   `PUT /user` refuses a password that comes without an email or phone. Linking an OAuth
///   identity (`DevIdentities.swift`) makes it permanent too, with the identity's email.
/// - `/factors` refuses tokens whose `is_anonymous` claim is true.
///
/// Not modelled: GoTrue's per-IP limit on anonymous sign-ins (`RATE_LIMIT_ANONYMOUS_USERS`)
/// and the clean-up of old anonymous users.
extension DevAuthAPI {
    /// `POST /signup` without an email or phone.
    func signUpAnonymously(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        // GoTrue's router checks the setting before the sign-up handler runs, so a disabled
        // project answers this even to a body the handler would refuse.
        guard state.withLock({ $0.anonymousUsers }) else {
            return DevError.response(422, "anonymous_provider_disabled", "Anonymous sign-ins are disabled", request: request)
        }
        let metadata = body["data"] as? [String: Any] ?? [:]
        return state.withLock { store -> DevResponse in
            // A password in the body is ignored, as GoTrue creates the user without one.
            var user = DevUser(id: UUID().uuidString.lowercased(), email: "", passwordDigest: "",
                               userMetadataJSON: (try? JSONSerialization.data(withJSONObject: metadata)) ?? Data("{}".utf8),
                               createdAt: now, updatedAt: now, lastSignInAt: now, providers: [])
            user.isAnonymous = true
            user.signedUpAnonymously = true
            user.appMetadataListsProviders = false
            store.users[user.id] = user
            return .json(200, issueSession(for: user, method: "anonymous", store: &store, now: now))
        }
    }

    /// GoTrue's `requireNotAnonymous`: 403 when the presented access token (already checked by
    /// `authenticated`) says `is_anonymous`. The claim decides, not the user's current state, so
    /// a converted user's old token stays refused until it is refreshed, as in GoTrue.
    func anonymousRefusal(_ request: DevRequest) -> DevResponse? {
        let header = request.headers["authorization"] ?? ""
        let token = String(header.dropFirst(min(7, header.count))).trimmingCharacters(in: .whitespaces)
        guard signer.verify(token)?["is_anonymous"] as? Bool == true else { return nil }
        return DevError.response(403, "no_authorization", "Anonymous user not allowed to perform these actions", request: request)
    }

    /// Whether a request field counts as not given: missing, or an empty string (GoTrue decodes
    /// both to its zero value).
    static func isAbsent(_ value: Any?) -> Bool {
        value == nil || (value as? String)?.isEmpty == true
    }
}
