import Crypto
import Foundation

/// Email links that come back to the app, as GoTrue has them.
///
/// - `/otp`, `/signup`, `/recover` and `/resend` take `code_challenge` and `code_challenge_method`
///   (`s256` or `plain`) in the body; with them a PKCE flow state is kept for the user (GoTrue's
///   `authentication_method` `magiclink`, `email/signup`, `recovery` or `email_change`) and the
///   email's token is `pkce_<hash>`. Where the link leads is GoTrue's `GetReferrer`: the
///   `redirect_to` header or query parameter, else the `Referer` header, when acceptable
///   (`acceptedRedirect`), else the site URL. A JSON body's `redirect_to` is not read, as in GoTrue.
/// - Every email with a link puts `link` (the `GET /verify` URL the email carries) and
///   `token_hash` (GoTrue's `{{ .TokenHash }}`, SHA-224 of address and code, hex, `pkce_` first in
///   the PKCE flow) into its outbox message, beside the 6-digit `code`.
/// - `GET /verify?token=&type=&redirect_to=` is the click: 303 to `redirect_to?code=AUTH_CODE`
///   for a `pkce_` token, to `redirect_to#access_token=…&type=…` otherwise, and on failure to
///   `redirect_to` with `error`, `error_code`, `error_description` (in the fragment, and in the
///   query too for a PKCE link).
/// - `POST /verify {"token_hash", "type"}` verifies without the address.
/// - `POST /token?grant_type=pkce` exchanges the code of a clicked link (`emailLinkGrant`).
/// - `POST /resend` sends a signup, email-change, SMS or phone-change code again.
///
/// Not modelled: GoTrue's hourly email and SMS limits and per-IP limits, secure email change (one
/// code, to the new address, as everywhere in this server), invites, and the frequency limit on
/// first sends (it applies to `/resend` and `/reauthenticate` only here, so that tests may send
/// a magic link right after a sign-up).
extension DevAuthAPI {
    /// GoTrue's prefix of PKCE email tokens (`PKCEPrefix`).
    static let pkcePrefix = "pkce_"
    /// The outbox types whose emails carry a link (GoTrue's templates with `{{ .ConfirmationURL }}`).
    static let linkTypes: Set<String> = ["signup", "magiclink", "recovery", "email_change", "invite"]

    // MARK: Requests

    /// GoTrue's `utilities.GetReferrer`: the `redirect_to` header, else the query parameter, if
    /// acceptable; else the `Referer` header if acceptable; else the site URL. `acceptedRedirect`
    /// (the `/authorize` check) decides what is acceptable: it answers the URL itself when it is.
    func emailRedirect(_ request: DevRequest) -> String {
        let header = request.headers["redirect_to"] ?? ""
        let asked = header.isEmpty ? request.query["redirect_to"] ?? "" : header
        for candidate in [asked, request.headers["referer"] ?? ""] where !candidate.isEmpty {
            if acceptedRedirect(candidate) == candidate { return candidate }
        }
        return options.externalURL
    }

    /// The body's PKCE fields checked as GoTrue's `validatePKCEParams` does: nil for the implicit
    /// flow (neither given), or the refusal. The method is checked only when the flow state is
    /// made (`DevPKCEChallenge.method`), as GoTrue does.
    static func pkceChallenge(in body: [String: Any], request: DevRequest) -> (challenge: DevPKCEChallenge?, refusal: DevResponse?) {
        let challenge = body["code_challenge"] as? String ?? ""
        let method = body["code_challenge_method"] as? String ?? ""
        if challenge.isEmpty != method.isEmpty {
            return (nil, DevError.response(400, "validation_failed", "PKCE flow requires code_challenge_method and code_challenge", request: request))
        }
        if challenge.isEmpty { return (nil, nil) }
        guard (43...128).contains(challenge.utf8.count) else {
            return (nil, DevError.response(400, "validation_failed", "code challenge has to be between 43 and 128 characters", request: request))
        }
        guard challenge.range(of: "^[a-zA-Z._~0-9-]+$", options: .regularExpression) != nil else {
            return (nil, DevError.response(400, "validation_failed", "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes", request: request))
        }
        return (DevPKCEChallenge(challenge: challenge, requestedMethod: method), nil)
    }

    /// GoTrue's answer when its flow state cannot be made (a `code_challenge_method` other than
    /// `s256` or `plain` is a plain error there, so a 500), with nothing changed.
    static func unexpectedFailure(_ request: DevRequest) -> DevResponse {
        DevError.response(500, "unexpected_failure", "Unexpected failure, please check server logs for more information", request: request)
    }

    /// GoTrue's `generateFlowState` for an email link. The caller has checked `challenge.method`.
    func keepEmailFlowState(userID: String, method: String, challenge: DevPKCEChallenge, store: inout DevStore, now: Date) {
        // GoTrue's clean-up drops flow states a day old; this keeps a long-running server small.
        store.emailFlowStates.removeAll { now.timeIntervalSince($0.createdAt) > 86_400 }
        store.emailFlowStates.append(DevEmailFlowState(authCode: UUID().uuidString.lowercased(), userID: userID, authenticationMethod: method,
                                                       codeChallenge: challenge.challenge, codeChallengeMethod: challenge.method ?? "s256",
                                                       createdAt: now))
    }

    /// What `sendCode` needs for a link: the token's form and where the link leads.
    func linkOptions(_ request: DevRequest, pkce: DevPKCEChallenge?) -> DevLinkOptions {
        DevLinkOptions(redirectTo: emailRedirect(request), pkce: pkce != nil)
    }

    /// The outbox fields of an email with a link: GoTrue's `{{ .ConfirmationURL }}`, built as its
    /// mailer's `getPath` does (`{API}/verify?token=&type=&redirect_to=`, the redirect escaped
    /// only when it holds `&`, `=` or `#`), and its `{{ .TokenHash }}`.
    func linkFields(type: String, tokenHash: String, redirectTo: String?) -> (link: String, tokenHash: String)? {
        guard Self.linkTypes.contains(type) else { return nil }
        var redirect = redirectTo ?? options.externalURL
        if redirect.contains(where: { "&=#".contains($0) }) { redirect = Self.goQueryEscape(redirect) }
        let link = "\(issuer)/verify?token=\(Self.goQueryEscape(tokenHash))&type=\(Self.goQueryEscape(type))&redirect_to=\(redirect)"
        return (link, tokenHash)
    }

    /// GoTrue's `GenerateTokenHash`: hex SHA-224 of the address and the code, `pkce_` first for a
    /// PKCE link (what its email tokens and `{{ .TokenHash }}` are).
    static func tokenHash(address: String, code: String, pkce: Bool) -> String {
        (pkce ? pkcePrefix : "") + SHA224Digest.hex(address + code)
    }

    // MARK: GET /verify

    /// `GET /verify?token=…&type=…&redirect_to=…`: the click on an email's link.
    func verifyLink(_ request: DevRequest, now: Date) -> DevResponse {
        let type = request.query["type"] ?? ""
        let token = request.query["token"] ?? ""
        // Missing parameters are JSON errors: GoTrue checks them before it knows where to redirect.
        guard !type.isEmpty else { return DevError.response(400, "validation_failed", "Verify requires a verification type", request: request) }
        guard !token.isEmpty else { return DevError.response(400, "validation_failed", "Verify requires a token or a token hash", request: request) }
        let redirect = emailRedirect(request)
        let pkce = token.hasPrefix(Self.pkcePrefix)
        var flowMethod: String?
        if pkce {
            // GoTrue's ParseAuthenticationMethod: an unknown one (`email`, say) is a plain error, a 500.
            guard let method = Self.authenticationMethod(type) else { return Self.unexpectedFailure(request) }
            flowMethod = method
        }
        return state.withLock { store -> DevResponse in
            let match: DevLinkMatch
            switch linkCode(type: type, tokenHash: token, store: store, now: now) {
            case .failure(let failure): return Self.errorRedirect(to: redirect, failure, pkce: pkce)
            case .success(let found): match = found
            }
            var flowIndex: Int?
            if let flowMethod {
                // GoTrue issues the code in the same transaction, so a missing flow state undoes
                // the verification: look before changing anything.
                flowIndex = store.emailFlowStates.lastIndex { $0.userID == match.code.userID && $0.authenticationMethod == flowMethod }
                if flowIndex == nil {
                    return Self.errorRedirect(to: redirect, DevLinkFailure(status: 400, code: "flow_state_not_found",
                                                                           message: "No associated flow state found. 422: No valid flow state found for user."), pkce: true)
                }
            }
            var user = confirmByLink(match, store: &store, now: now)
            if let flowIndex {
                store.emailFlowStates[flowIndex].authCodeIssuedAt = now
                return Self.seeOther(Self.addingQuery(to: redirect, [("code", store.emailFlowStates[flowIndex].authCode)]))
            }
            user.lastSignInAt = now
            store.users[user.id] = user
            let session = issueSession(for: user, method: match.type == "recovery" ? "recovery" : "otp", store: &store, now: now)
            // GoTrue's AsRedirectURL: the tokens and the (resolved) type in the fragment.
            let fragment = Self.goEncode([
                ("access_token", "\(session["access_token"] ?? "")"), ("token_type", "bearer"),
                ("expires_in", "\(session["expires_in"] ?? "")"), ("expires_at", "\(session["expires_at"] ?? "")"),
                ("refresh_token", "\(session["refresh_token"] ?? "")"), ("sb", ""), ("type", match.type),
            ])
            return Self.seeOther(redirect + "#" + fragment)
        }
    }

    /// `POST /verify {"token_hash", "type"}`: GoTrue's verifyPost with a token hash, answering a session.
    func verifyTokenHash(_ body: [String: Any], type: String, tokenHash: String, request: DevRequest, now: Date) -> DevResponse {
        if !Self.isAbsent(body["email"]) || !Self.isAbsent(body["phone"]) || !Self.isAbsent(body["redirect_to"]) {
            return DevError.response(400, "validation_failed", "Only the token_hash and type should be provided", request: request)
        }
        return state.withLock { store -> DevResponse in
            switch linkCode(type: type, tokenHash: tokenHash, store: store, now: now) {
            case .failure(let failure):
                return DevError.response(failure.status, failure.code, failure.message, request: request)
            case .success(let match):
                var user = confirmByLink(match, store: &store, now: now)
                user.lastSignInAt = now
                store.users[user.id] = user
                // As the dev server's POST /verify with a code: a recovery signs in with `recovery`.
                return .json(200, issueSession(for: user, method: match.type == "recovery" ? "recovery" : "otp", store: &store, now: now))
            }
        }
    }

    /// GoTrue's `verifyTokenHash`: the code whose token hash is `tokenHash` among those `type` may
    /// use (its `confirmation_token`, `recovery_token` or email-change token), still fresh. `type`
    /// `email` resolves to `signup` or `magiclink` by which one matched.
    func linkCode(type: String, tokenHash: String, store: DevStore, now: Date) -> Result<DevLinkMatch, DevLinkFailure> {
        let confirmation: Set<String> = ["signup", "invite"], recovery: Set<String> = ["magiclink", "recovery"]
        let usable: Set<String>
        switch type {
        case "email": usable = confirmation.union(recovery)
        case "signup", "invite": usable = confirmation
        case "recovery", "magiclink": usable = recovery
        case "email_change": usable = ["email_change"]
        default: return .failure(DevLinkFailure(status: 400, code: "validation_failed", message: "Invalid email verification type"))
        }
        let expired = DevLinkFailure(status: 403, code: "otp_expired", message: "Email link is invalid or has expired")
        guard let entry = store.codes.first(where: { usable.contains($0.value.type) && $0.value.tokenHash == tokenHash }),
              store.users[entry.value.userID] != nil, now.timeIntervalSince(entry.value.sentAt) <= options.otpLifetime else {
            return .failure(expired)
        }
        let resolved = type == "email" ? (confirmation.contains(entry.value.type) ? "signup" : "magiclink") : type
        return .success(DevLinkMatch(key: entry.key, code: entry.value, type: resolved))
    }

    /// Uses up the matched code and confirms what it was sent for, as GoTrue's signupVerify,
    /// recoverVerify and emailChangeVerify do; answers the user as stored.
    private func confirmByLink(_ match: DevLinkMatch, store: inout DevStore, now: Date) -> DevUser {
        store.codes[match.key] = nil
        var user = store.users[match.code.userID]!
        if match.type == "email_change" {
            user.confirmEmailChange(now: now)
        } else {
            user.emailConfirmedAt = user.emailConfirmedAt ?? now
        }
        // GoTrue rewrites app_metadata's providers from the identities after every verification.
        user.appMetadataListsProviders = true
        user.updatedAt = now
        store.users[user.id] = user
        return user
    }

    /// GoTrue's `ParseAuthenticationMethod` (anything ending in `signup` is `email/signup`); nil
    /// for what it refuses.
    static func authenticationMethod(_ type: String) -> String? {
        if type.hasSuffix("signup") { return "email/signup" }
        let known: Set<String> = ["oauth", "password", "otp", "totp", "recovery", "invite", "sso/saml", "magiclink", "email/signup",
                                  "email_change", "token_refresh", "mfa/phone", "mfa/webauthn", "web3",
                                  "oauth_provider/authorization_code", "passkey"]
        return known.contains(type) ? type : nil
    }

    // MARK: The pkce grant

    /// `POST /token?grant_type=pkce` for the code of a clicked email link, in GoTrue's order:
    /// expired (a magic link's state counts from the click, others from the request), then the
    /// verifier; the state goes once it gave a session. `amr` is the state's authentication method.
    func emailLinkGrant(_ flow: DevEmailFlowState, verifier: String, request: DevRequest, store: inout DevStore, now: Date) -> DevResponse {
        let start = flow.authenticationMethod == "magiclink" ? flow.authCodeIssuedAt ?? flow.createdAt : flow.createdAt
        if now.timeIntervalSince(start) > Self.flowStateLifetime {
            return DevError.response(422, "flow_state_expired", "invalid flow state, flow state has expired", request: request)
        }
        guard var user = store.users[flow.userID] else { return Self.unexpectedFailure(request) }
        let presented = flow.codeChallengeMethod == "plain" ? verifier : JWTSigner.base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
        guard presented == flow.codeChallenge else {
            return DevError.response(400, "bad_code_verifier", "code challenge does not match previously saved code verifier", request: request)
        }
        store.emailFlowStates.removeAll { $0.authCode == flow.authCode }
        user.lastSignInAt = now
        store.users[user.id] = user
        return .json(200, issueSession(for: user, method: flow.authenticationMethod, store: &store, now: now))
    }

    // MARK: POST /resend

    /// `POST /resend {"type", "email" | "phone", "code_challenge"?, "code_challenge_method"?}` with
    /// `redirect_to` as for `/otp`: GoTrue's checks in its order, `{}` (nothing sent) for an
    /// unknown address or nothing pending, the frequency limits, then a new code replacing the old.
    func resend(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        let type = body["type"] as? String ?? ""
        var pkce: DevPKCEChallenge?
        switch type {
        case "signup", "email_change":
            let checked = Self.pkceChallenge(in: body, request: request)
            if let refusal = checked.refusal { return refusal }
            pkce = checked.challenge
        case "sms", "phone_change": break
        default:
            return DevError.response(400, "validation_failed", "Missing one of these types: signup, email_change, sms, phone_change", request: request)
        }
        let rawEmail = body["email"] as? String ?? "", rawPhone = body["phone"] as? String ?? ""
        if rawEmail.isEmpty, type == "signup" {
            return DevError.response(400, "validation_failed", "Type provided requires an email address", request: request)
        }
        if rawPhone.isEmpty, type == "sms" {
            return DevError.response(400, "validation_failed", "Type provided requires a phone number", request: request)
        }
        if !rawEmail.isEmpty, !rawPhone.isEmpty {
            return DevError.response(400, "validation_failed", "Only an email address or phone number should be provided.", request: request)
        }
        if rawEmail.isEmpty, rawPhone.isEmpty {
            return DevError.response(400, "validation_failed", "Missing email address or phone number", request: request)
        }
        let email = Self.email(in: body) ?? ""
        if !rawEmail.isEmpty, !Self.looksLikeEmail(email) {
            return DevError.response(400, "validation_failed", "Unable to validate email address: invalid format", request: request)
        }
        let phone = Self.phone(in: body)
        if !rawPhone.isEmpty, phone.range(of: "^[1-9][0-9]{1,14}$", options: .regularExpression) == nil {
            return DevError.response(400, "validation_failed", "Invalid phone number format (E.164 required)", request: request)
        }
        let link = linkOptions(request, pkce: pkce)
        return state.withLock { store -> DevResponse in
            guard let user = rawEmail.isEmpty ? store.user(phone: phone) : store.user(email: email) else { return .json(200, [String: Any]()) }
            return resendCode(type: type, to: user, pkce: pkce, link: link, request: request, store: &store, now: now)
        }
    }

    /// The part of `/resend` that knows the user: nothing sent when nothing waits for a code of
    /// that kind, GoTrue's frequency limit on the pending code, then the new code.
    private func resendCode(type: String, to user: DevUser, pkce: DevPKCEChallenge?, link: DevLinkOptions, request: DevRequest,
                            store: inout DevStore, now: Date) -> DevResponse {
        let purpose: String
        let address: String?
        switch type {
        case "signup": purpose = "email"; address = user.emailConfirmedAt == nil ? user.email : nil
        case "sms": purpose = "sms"; address = user.phoneConfirmedAt == nil ? user.phone : nil
        case "email_change": purpose = "email_change"; address = user.newEmail
        default: purpose = "phone_change"; address = user.newPhone
        }
        guard let address else { return .json(200, [String: Any]()) }
        let bySMS = type == "sms" || type == "phone_change"
        let frequency: TimeInterval = bySMS ? store.smsMaxFrequency : store.smtpMaxFrequency
        // GoTrue's sent-at column: a magic link's code shares the key of a sign-up's here, but not its column.
        if let sent = store.codes["\(address) \(purpose)"], purpose != "email" || sent.type == "signup" {
            let elapsed = now.timeIntervalSince(sent.sentAt)
            if elapsed < frequency {
                return DevError.response(429, bySMS ? "over_sms_send_rate_limit" : "over_email_send_rate_limit",
                                         "For security purposes, you can only request this after \(Int(frequency - elapsed)) seconds.", request: request)
            }
        }
        if let pkce {
            guard pkce.method != nil else { return Self.unexpectedFailure(request) }
            keepEmailFlowState(userID: user.id, method: type == "signup" ? "email/signup" : "email_change", challenge: pkce, store: &store, now: now)
        }
        sendCode(to: user, purpose: purpose, type: type, link: link, store: &store, now: now)
        if bySMS { return .json(200, ["message_id": "dev-\(Self.randomToken())"]) }
        return .json(200, [String: Any]())
    }

    // MARK: Redirects

    /// A 303, as GoTrue's `http.Redirect(…, http.StatusSeeOther)`.
    static func seeOther(_ location: String) -> DevResponse {
        DevResponse(status: 303, headers: ["Location": location])
    }

    /// GoTrue's `prepErrorRedirectURL`: `error` (OAuth's name for the status), `error_code` and
    /// `error_description` in the fragment with `sb`, and for a PKCE link merged into the query too.
    static func errorRedirect(to target: String, _ failure: DevLinkFailure, pkce: Bool) -> DevResponse {
        let oauthError = [400: "invalid_request", 401: "unauthorized_client", 403: "access_denied",
                          500: "server_error", 503: "temporarily_unavailable"][failure.status]
        var items: [(String, String)] = oauthError.map { [("error", $0)] } ?? []
        items += [("error_code", failure.code), ("error_description", failure.message)]
        let parts = URLParts(target)
        let query = pkce ? goEncode(goMerge(parts.query, items)) : parts.query
        // Go escapes the fragment once more when it writes the URL (`%` becomes `%25`).
        let fragment = goFragmentEscape(goEncode(items + [("sb", "")]))
        return seeOther(parts.base + (query.map { "?" + $0 } ?? "") + "#" + fragment)
    }

    /// GoTrue's `prepPKCERedirectURL`: the query re-encoded (sorted) with `items` set.
    static func addingQuery(to target: String, _ items: [(String, String)]) -> String {
        let parts = URLParts(target)
        return parts.base + "?" + goEncode(goMerge(parts.query, items)) + (parts.fragment.map { "#" + $0 } ?? "")
    }

    /// A URL cut at its first `?` and `#`.
    struct URLParts {
        var base: String
        var query: String?
        var fragment: String?

        init(_ url: String) {
            let (beforeFragment, fragment) = Self.cut(url, at: "#")
            let (base, query) = Self.cut(beforeFragment, at: "?")
            self.base = base
            self.query = query
            self.fragment = fragment
        }

        private static func cut(_ text: String, at separator: Character) -> (String, String?) {
            guard let index = text.firstIndex(of: separator) else { return (text, nil) }
            return (String(text[..<index]), String(text[text.index(after: index)...]))
        }
    }

    /// Go's `url.ParseQuery` of `query` with `items` set (replacing keys it had), as pairs.
    static func goMerge(_ query: String?, _ items: [(String, String)]) -> [(String, String)] {
        let replaced = Set(items.map(\.0))
        var pairs: [(String, String)] = []
        for part in (query ?? "").split(separator: "&") where !part.isEmpty {
            let (key, value) = part.firstIndex(of: "=").map { (String(part[..<$0]), String(part[part.index(after: $0)...])) } ?? (String(part), "")
            // Go drops a pair it cannot unescape.
            guard let name = key.replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
                  let decoded = value.replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
                  !replaced.contains(name) else { continue }
            pairs.append((name, decoded))
        }
        return pairs + items
    }

    /// Go's `url.Values.Encode`: sorted by key (a key's values in order), each part `QueryEscape`d.
    static func goEncode(_ pairs: [(String, String)]) -> String {
        pairs.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }
            .map { goQueryEscape($0.element.0) + "=" + goQueryEscape($0.element.1) }.joined(separator: "&")
    }

    /// Go's `url.QueryEscape`: all but letters, digits and `-_.~` as `%XX`, a space as `+`.
    static func goQueryEscape(_ text: String) -> String {
        escape(text) { byte in
            if byte == UInt8(ascii: " ") { return "+" }
            return isUnreserved(byte) ? nil : ""
        }
    }

    /// How Go writes a URL's fragment set from a decoded string: `$&+,/:;=?@!()*` stay, the
    /// rest (`%` too) is escaped.
    static func goFragmentEscape(_ text: String) -> String {
        escape(text) { byte in isUnreserved(byte) || "$&+,/:;=?@!()*".utf8.contains(byte) ? nil : "" }
    }

    /// Escapes each byte that `rule` does not leave alone (nil): as its answer, or `%XX` for "".
    private static func escape(_ text: String, _ rule: (UInt8) -> String?) -> String {
        var out = ""
        for byte in text.utf8 {
            switch rule(byte) {
            case nil: out.unicodeScalars.append(UnicodeScalar(byte))
            case ""?: out += String(format: "%%%02X", byte)
            case let replacement?: out += replacement
            }
        }
        return out
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return "-_.~".utf8.contains(byte)
        }
    }
}

/// A `code_challenge` and the `code_challenge_method` sent with it.
struct DevPKCEChallenge: Sendable {
    var challenge: String
    /// As sent; GoTrue accepts `s256` and `plain` in any case.
    var requestedMethod: String

    /// The method as GoTrue stores it (`s256` or `plain`); nil when it refuses it.
    var method: String? {
        let lowered = requestedMethod.lowercased()
        return ["s256", "plain"].contains(lowered) ? lowered : nil
    }
}

/// An email link's PKCE flow state (GoTrue's `flow_state` row for an email sign-in): its auth code
/// exists from the request on, but only the click hands it out.
struct DevEmailFlowState: Sendable {
    var authCode: String
    var userID: String
    /// `magiclink`, `email/signup`, `recovery` or `email_change`: the session's `amr` after the exchange.
    var authenticationMethod: String
    var codeChallenge: String
    /// `s256` or `plain`.
    var codeChallengeMethod: String
    var createdAt: Date
    /// When a click handed the code out; a magic link's state expires counting from here.
    var authCodeIssuedAt: Date?
}

/// How `sendCode` makes an email's link: where it leads (nil: the site URL) and whether its token
/// is the PKCE form.
struct DevLinkOptions: Sendable {
    var redirectTo: String?
    var pkce = false
}

/// A code found by its token hash: its key in `DevStore.codes`, and the type it verifies as.
struct DevLinkMatch {
    var key: String
    var code: DevOneTimeCode
    var type: String
}

/// A verification failure that a click turns into a redirect and `POST /verify` into an error answer.
struct DevLinkFailure: Error {
    var status: Int
    var code: String
    var message: String
}

/// SHA-224 (FIPS 180-4), which swift-crypto does not offer: GoTrue's token hashes are made with it.
enum SHA224Digest {
    /// The lower-case hex digest of the UTF-8 text.
    static func hex(_ text: String) -> String {
        digest(Array(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private static func digest(_ message: [UInt8]) -> [UInt8] {
        // SHA-256's rounds with SHA-224's initial values, cut to seven words.
        var h: [UInt32] = [0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939, 0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4]
        var padded = message + [0x80]
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
        var w = [UInt32](repeating: 0, count: 64)
        for chunk in stride(from: 0, to: padded.count, by: 64) {
            for i in 0..<16 {
                w[i] = padded[chunk + 4 * i ..< chunk + 4 * i + 4].reduce(0) { $0 << 8 | UInt32($1) }
            }
            for i in 16..<64 {
                let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
            for i in 0..<64 {
                let t1 = hh &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
                let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            for (i, value) in [a, b, c, d, e, f, g, hh].enumerated() { h[i] = h[i] &+ value }
        }
        return h.prefix(7).flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - 8 * $0)) } }
    }
}
