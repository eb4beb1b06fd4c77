import Foundation

/// Multi-factor authentication, as GoTrue's `/factors` routes do it (TOTP and phone factors),
/// all behind the Bearer access token:
///
/// - `POST /factors {"factor_type":"totp"|"phone", "friendly_name"?, "issuer"?, "phone"?}` →
///   `{id, type, friendly_name, totp: {qr_code, secret, uri}}` or `{id, type, friendly_name, phone}`.
/// - `POST /factors/{id}/challenge {"channel"?: "sms"|"whatsapp"}` → `{id, type, expires_at}`; for
///   a phone factor the code goes to the outbox (`/admin/dev/outbox`) as a message of type `mfa`.
/// - `POST /factors/{id}/verify {"challenge_id", "code"}` → a session answer: the same session at
///   `aal2`, with a new refresh token the previous one is not the parent of.
/// - `DELETE /factors/{id}` → `{id}`.
///
/// GoTrue's defaults hold: at most 10 factors (10 verified), unverified factors without a
/// challenge expire after 300 s, challenges after 300 s, and a phone factor is challenged at most
/// once a minute. Phone factors are enabled (GoTrue's default project has them off); WebAuthn is
/// off, as in GoTrue's default project. Not modelled: the per-IP rate limit on challenge and
/// verify, and the client IP check (every request comes from the same address here).
/// Anonymous users' tokens are refused on every route here (`DevAnonymousUsers.swift`).
extension DevAuthAPI {
    /// GoTrue's `MFA_MAX_ENROLLED_FACTORS` and `MFA_MAX_VERIFIED_FACTORS` defaults.
    static let maxEnrolledFactors = 10, maxVerifiedFactors = 10
    /// GoTrue's `MFA_FACTOR_EXPIRY_DURATION`: an unverified factor never challenged goes after this.
    static let factorExpiry: TimeInterval = 300
    /// GoTrue's `MFA_CHALLENGE_EXPIRY_DURATION`.
    static let challengeExpiry: TimeInterval = 300
    /// GoTrue's `MFA_PHONE_MAX_FREQUENCY` default: one SMS challenge a minute per factor.
    static let phoneChallengeInterval: TimeInterval = 60
    /// The outbox type of MFA codes (the type GoTrue's send-SMS hook is given for them).
    static let mfaMessageType = "mfa"

    /// Routes `/factors…`: wrong methods get 405 before authentication, as GoTrue's router
    /// answers them before its middleware runs.
    func factors(_ request: DevRequest, path: String, now: Date) -> DevResponse {
        let parts = path.split(separator: "/").map(String.init)
        let wanted: String
        switch parts.count {
        case 1: wanted = "POST"
        case 2: wanted = "DELETE"
        case 3 where ["challenge", "verify"].contains(parts[2]): wanted = "POST"
        default: return DevError.response(404, "not_found", "Not found", request: request)
        }
        guard request.method == wanted else {
            return DevError.response(405, "method_not_allowed", "Method not allowed", request: request)
        }
        return authenticated(request, now: now) { user, sessionID in
            // GoTrue's requireNotAnonymous runs after authentication, before the factor is loaded.
            if let refusal = anonymousRefusal(request) { return refusal }
            guard parts.count > 1 else {
                return withBody(request) { enrollFactor($0, userID: user.id, sessionID: sessionID, request: request, now: now) }
            }
            // GoTrue's loadFactor: the id must parse, and the factor must be this user's.
            guard let parsed = UUID(uuidString: parts[1]) else {
                return DevError.response(404, "validation_failed", "factor_id must be an UUID", request: request)
            }
            let factorID = parsed.uuidString.lowercased()
            guard state.withLock({ $0.factor(factorID, of: user.id) }) != nil else {
                return DevError.response(404, "mfa_factor_not_found", "Factor not found", request: request)
            }
            switch parts.count == 3 ? parts[2] : "" {
            case "challenge": return challengeFactor(factorID, userID: user.id, request: request, now: now)
            case "verify":
                return withBody(request) { verifyFactor(factorID, $0, userID: user.id, sessionID: sessionID, request: request, now: now) }
            default: return unenrollFactor(factorID, userID: user.id, sessionID: sessionID, request: request)
            }
        }
    }

    // MARK: Enroll

    /// `POST /factors`.
    private func enrollFactor(_ body: [String: Any], userID: String, sessionID: String, request: DevRequest, now: Date) -> DevResponse {
        guard let fields = Self.strings(["factor_type", "friendly_name", "issuer", "phone"], in: body) else {
            return DevError.response(400, "bad_json", "Could not parse request body as JSON: a field is not a string", request: request)
        }
        let name = fields["friendly_name"]!
        switch fields["factor_type"]! {
        case "totp": return enrollTOTP(name: name, issuer: fields["issuer"]!, userID: userID, sessionID: sessionID, request: request, now: now)
        case "phone": return enrollPhone(name: name, phone: fields["phone"]!, userID: userID, sessionID: sessionID, request: request, now: now)
        case "webauthn":
            return DevError.response(422, "mfa_webauthn_enroll_not_enabled", "MFA enroll is disabled for WebAuthn", request: request)
        default:
            return DevError.response(400, "validation_failed", "factor_type needs to be totp, phone, or webauthn", request: request)
        }
    }

    private func enrollTOTP(name: String, issuer: String, userID: String, sessionID: String, request: DevRequest, now: Date) -> DevResponse {
        // GoTrue names the issuer after the host (with its port) of the site URL.
        let issuer = issuer.isEmpty ? Self.host(of: options.externalURL) : issuer
        return state.withLock { store -> DevResponse in
            if let refusal = validateNewFactor(name: name, userID: userID, sessionID: sessionID, store: &store, request: request, now: now) {
                return refusal
            }
            guard let email = store.users[userID]?.email else { return DevError.response(404, "user_not_found", "User not found", request: request) }
            let secret = TOTP.newSecret()
            let factor = DevFactor(id: UUID().uuidString.lowercased(), kind: .totp, friendlyName: name, secret: secret, createdAt: now, updatedAt: now)
            store.users[userID]?.factors.append(factor)
            let uri = Self.otpauthURI(issuer: issuer, account: email, secret: secret)
            return .json(200, ["id": factor.id, "type": "totp", "friendly_name": name,
                               "totp": ["qr_code": DevQRCode.svg(of: uri), "secret": secret, "uri": uri]])
        }
    }

    private func enrollPhone(name: String, phone: String, userID: String, sessionID: String, request: DevRequest, now: Date) -> DevResponse {
        guard !phone.isEmpty else {
            return DevError.response(400, "validation_failed", "Phone number required to enroll Phone factor", request: request)
        }
        // GoTrue's validatePhone: drop a leading "+" and the spaces, then E.164's digits.
        let digits = (phone.hasPrefix("+") ? String(phone.dropFirst()) : phone).replacingOccurrences(of: " ", with: "")
        guard digits.range(of: "^[1-9][0-9]{1,14}$", options: .regularExpression) != nil else {
            return DevError.response(400, "validation_failed", "Invalid phone number format (E.164 required)", request: request)
        }
        return state.withLock { store -> DevResponse in
            let samePhone = store.users[userID]?.factors.filter { $0.kind == .phone && $0.phone == digits } ?? []
            if samePhone.contains(where: \.verified) {
                return DevError.response(422, "mfa_verified_factor_exists",
                                         "A verified phone factor already exists, unenroll the existing factor to continue", request: request)
            }
            // An unverified factor for the same number is replaced, before the name is checked.
            store.deleteFactors(of: userID) { $0.kind == .phone && $0.phone == digits }
            if let refusal = validateNewFactor(name: name, userID: userID, sessionID: sessionID, store: &store, request: request, now: now) {
                return refusal
            }
            let factor = DevFactor(id: UUID().uuidString.lowercased(), kind: .phone, friendlyName: name, phone: digits, createdAt: now, updatedAt: now)
            store.users[userID]?.factors.append(factor)
            // The number comes back as the client sent it, as GoTrue echoes it.
            return .json(200, ["id": factor.id, "type": "phone", "friendly_name": name, "phone": phone])
        }
    }

    /// GoTrue's validateFactors: expired unverified factors go first, then the name, the counts
    /// and the session's level are checked. Nil when the new factor may be enrolled.
    private func validateNewFactor(name: String, userID: String, sessionID: String, store: inout DevStore,
                                   request: DevRequest, now: Date) -> DevResponse? {
        // GoTrue deletes them for every user, not only this one; a factor with a challenge stays.
        let challenged = Set(store.challenges.values.map(\.factorID))
        for id in Array(store.users.keys) {
            store.deleteFactors(of: id) { !$0.verified && !challenged.contains($0.id) && $0.createdAt.addingTimeInterval(Self.factorExpiry) < now }
        }
        let factors = store.users[userID]?.factors ?? []
        if factors.contains(where: { $0.friendlyName == name }) {
            return DevError.response(422, "mfa_factor_name_conflict",
                                     "A factor with the friendly name \(Self.goQuoted(name)) for this user already exists", request: request)
        }
        let verified = factors.filter(\.verified).count
        if factors.count >= Self.maxEnrolledFactors || verified >= Self.maxVerifiedFactors {
            // GoTrue says "verified" for both limits.
            return DevError.response(422, "too_many_enrolled_mfa_factors", "Maximum number of verified factors reached, unenroll to continue", request: request)
        }
        if verified > 0, let session = store.sessions[sessionID], session.aal != "aal2" {
            return DevError.response(403, "insufficient_aal", "AAL2 required to enroll a new factor", request: request)
        }
        return nil
    }

    // MARK: Challenge

    /// `POST /factors/{id}/challenge`. A TOTP challenge ignores the body, as GoTrue's does.
    private func challengeFactor(_ factorID: String, userID: String, request: DevRequest, now: Date) -> DevResponse {
        guard let factor = state.withLock({ $0.factor(factorID, of: userID) }) else {
            return DevError.response(404, "mfa_factor_not_found", "Factor not found", request: request)
        }
        guard factor.kind == .phone else {
            return state.withLock { store in
                let challenge = recordChallenge(of: factorID, userID: userID, code: nil, store: &store, now: now)
                return .json(200, ["id": challenge.id, "type": factor.kind.rawValue, "expires_at": Self.expiry(of: challenge)])
            }
        }
        return withBody(request) { body in
            guard let fields = Self.strings(["channel"], in: body) else {
                return DevError.response(400, "bad_json", "Could not parse request body as JSON: channel is not a string", request: request)
            }
            let channel = fields["channel"]!.isEmpty ? "sms" : fields["channel"]!
            // This server's SMS provider stands in for Twilio, the one GoTrue also sends WhatsApp through.
            guard ["sms", "whatsapp"].contains(channel) else {
                return DevError.response(400, "validation_failed", "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.", request: request)
            }
            return state.withLock { store -> DevResponse in
                guard let current = store.factor(factorID, of: userID) else {
                    return DevError.response(404, "mfa_factor_not_found", "Factor not found", request: request)
                }
                if let last = current.lastChallengedAt, !(last.addingTimeInterval(Self.phoneChallengeInterval) < now) {
                    // GoTrue's generateFrequencyLimitErrorMessage truncates the seconds left.
                    let left = Int(last.addingTimeInterval(Self.phoneChallengeInterval).timeIntervalSince(now))
                    return DevError.response(429, "over_sms_send_rate_limit", "For security purposes, you can only request this after \(left) seconds.", request: request)
                }
                var generator = SystemRandomNumberGenerator()
                let code = String(format: "%06d", Int(generator.next(upperBound: UInt(1_000_000))))
                let challenge = recordChallenge(of: factorID, userID: userID, code: code, store: &store, now: now)
                deliver(DevMessage(to: current.phone, channel: channel, type: Self.mfaMessageType, code: code, sentAt: now), store: &store)
                return .json(200, ["id": challenge.id, "type": "phone", "expires_at": Self.expiry(of: challenge)])
            }
        }
    }

    /// Stores a new challenge and notes the time on its factor (GoTrue's WriteChallengeToDatabase).
    private func recordChallenge(of factorID: String, userID: String, code: String?, store: inout DevStore, now: Date) -> DevChallenge {
        let challenge = DevChallenge(id: UUID().uuidString.lowercased(), factorID: factorID, createdAt: now, otpCode: code)
        store.challenges[challenge.id] = challenge
        if let index = store.users[userID]?.factors.firstIndex(where: { $0.id == factorID }) {
            store.users[userID]?.factors[index].lastChallengedAt = now
        }
        return challenge
    }

    private static func expiry(of challenge: DevChallenge) -> Int {
        Int(challenge.createdAt.addingTimeInterval(challengeExpiry).timeIntervalSince1970)
    }

    // MARK: Verify

    /// `POST /factors/{id}/verify`: on success the session is raised to `aal2` and re-issued.
    private func verifyFactor(_ factorID: String, _ body: [String: Any], userID: String, sessionID: String,
                              request: DevRequest, now: Date) -> DevResponse {
        guard let fields = Self.strings(["challenge_id", "code"], in: body) else {
            return DevError.response(400, "bad_json", "Could not parse request body as JSON: challenge_id and code must be strings", request: request)
        }
        // GoTrue decodes challenge_id as a UUID: text that is not one fails the JSON decoding,
        // an absent one is the zero UUID, which no challenge has.
        let challengeID: String
        if fields["challenge_id"]!.isEmpty {
            challengeID = ""
        } else if let parsed = UUID(uuidString: fields["challenge_id"]!) {
            challengeID = parsed.uuidString.lowercased()
        } else {
            return DevError.response(400, "bad_json", "Could not parse request body as JSON: uuid: incorrect UUID format", request: request)
        }
        let code = fields["code"]!
        guard !code.isEmpty else {
            return DevError.response(400, "validation_failed", "Code needs to be non-empty", request: request)
        }
        return state.withLock { store -> DevResponse in
            guard let factor = store.factor(factorID, of: userID) else {
                return DevError.response(404, "mfa_factor_not_found", "Factor not found", request: request)
            }
            guard let challenge = store.challenges[challengeID], challenge.factorID == factorID else {
                return DevError.response(422, "mfa_factor_not_found", "MFA factor with the provided challenge ID not found", request: request)
            }
            if challenge.verifiedAt != nil {
                // GoTrue refuses an answered challenge with the message of its IP check.
                return DevError.response(422, "mfa_ip_address_mismatch", "Challenge and verify IP addresses mismatch.", request: request)
            }
            if now > challenge.createdAt.addingTimeInterval(Self.challengeExpiry) {
                store.challenges[challengeID] = nil
                return DevError.response(422, "mfa_challenge_expired",
                                         "MFA challenge \(challengeID) has expired, verify against another challenge or create a new challenge.", request: request)
            }
            switch factor.kind {
            case .totp where !TOTP.isValid(code, secret: factor.secret, at: now):
                return DevError.response(422, "mfa_verification_failed", "Invalid TOTP code entered", request: request)
            case .phone where !TOTP.constantTimeEqual(challenge.otpCode ?? "", code):
                return DevError.response(422, "mfa_verification_failed", "Invalid MFA Phone code entered", request: request)
            default: break
            }
            return raiseSession(sessionID, verifying: factor, challengeID: challengeID, userID: userID, store: &store, request: request, now: now)
        }
    }

    /// A verification's effects, in GoTrue's order: the challenge is used up, the factor verified,
    /// the session gets the method's AMR entry, `aal2` and a new refresh token, the user's other
    /// sessions below `aal2` end, and unverified factors of the same type go.
    private func raiseSession(_ sessionID: String, verifying factor: DevFactor, challengeID: String, userID: String,
                              store: inout DevStore, request: DevRequest, now: Date) -> DevResponse {
        guard var session = store.sessions[sessionID] else {
            return DevError.response(403, "session_not_found", "Session from session_id claim in JWT does not exist", request: request)
        }
        store.challenges[challengeID]?.verifiedAt = now
        if !factor.verified, let index = store.users[userID]?.factors.firstIndex(where: { $0.id == factor.id }) {
            store.users[userID]?.factors[index].verified = true
            store.users[userID]?.factors[index].updatedAt = now
        }
        session.addAMR(factor.kind.amrMethod, at: now)
        session.aal = session.claimedAAL
        session.factorID = factor.id
        store.sessions[sessionID] = session
        // GoTrue moves a v2 session's token counter on by two, not one: the token the client
        // holds (issued at aal1) is then two steps behind, no longer the "one step behind" parent
        // that is always answered, and presenting it later counts as reuse of a revoked token
        // (judged from the session's last refresh, which the verification is not:
        // `DevSession.lastRefreshedAt`). The skipped step is a parent that was never handed out.
        if let previous = store.activeToken[sessionID], let row = store.refreshTokens[previous] {
            store.refreshTokens[previous]?.revokedAt = row.revokedAt ?? now
        }
        let refreshToken = newRefreshToken(session: sessionID, parent: "never-issued-" + Self.randomToken(), store: &store, now: now)
        guard let user = store.users[userID] else {
            return DevError.response(403, "user_not_found", "User from sub claim in JWT does not exist", request: request)
        }
        // GoTrue loads the user for its answer before it deletes the unverified factors, so the
        // answer still lists them.
        let answer = sessionJSON(user: user, session: session, refreshToken: refreshToken, store: store, now: now)
        for other in store.sessions.values where other.userID == userID && other.aal < "aal2" {
            store.deleteSession(other.id)
        }
        store.deleteFactors(of: userID) { !$0.verified && $0.kind == factor.kind }
        return .json(200, answer)
    }

    // MARK: Unenroll

    /// `DELETE /factors/{id}`: a verified factor needs an `aal2` session. The sessions it raised
    /// drop back to `aal1` and lose its AMR entry; their current access tokens keep their claims
    /// until the next refresh.
    private func unenrollFactor(_ factorID: String, userID: String, sessionID: String, request: DevRequest) -> DevResponse {
        state.withLock { store -> DevResponse in
            guard let factor = store.factor(factorID, of: userID) else {
                return DevError.response(404, "mfa_factor_not_found", "Factor not found", request: request)
            }
            if factor.verified, store.sessions[sessionID]?.aal != "aal2" {
                return DevError.response(422, "insufficient_aal", "AAL2 required to unenroll verified factor", request: request)
            }
            store.deleteFactors(of: userID) { $0.id == factorID }
            for var session in store.sessions.values where session.userID == userID && session.factorID == factorID {
                session.amr.removeAll { $0.method == factor.kind.amrMethod }
                session.aal = "aal1"
                session.factorID = nil
                store.sessions[session.id] = session
            }
            return .json(200, ["id": factorID])
        }
    }

    // MARK: Helpers

    /// The string fields `keys` of `body`, "" for absent ones; nil when one is present but not a
    /// string (GoTrue's typed JSON decoding fails then).
    private static func strings(_ keys: [String], in body: [String: Any]) -> [String: String]? {
        var fields: [String: String] = [:]
        for key in keys {
            switch body[key] {
            case nil: fields[key] = ""
            case let text as String: fields[key] = text
            default: return nil
            }
        }
        return fields
    }

    /// The host and port of a URL, as Go's `url.URL.Host` has them.
    static func host(of url: String) -> String {
        let afterScheme = url.range(of: "://").map { String(url[$0.upperBound...]) } ?? url
        let authority = afterScheme.prefix { !"/?#".contains($0) }
        return String(authority.split(separator: "@").last ?? "")
    }

    /// The key URI authenticator apps read, built as GoTrue's TOTP library builds it: the label
    /// `ISSUER:ACCOUNT` in the path, then the parameters sorted by name, escaped with `%20`.
    static func otpauthURI(issuer: String, account: String, secret: String) -> String {
        let label = escape(issuer + ":" + account, keeping: "$&+,/:;=@")
        let query = [("algorithm", "SHA1"), ("digits", "6"), ("issuer", issuer), ("period", "30"), ("secret", secret)]
            .map { "\($0.0)=\(escape($0.1, keeping: "$&+:=@"))" }.joined(separator: "&")
        return "otpauth://totp/\(label)?\(query)"
    }

    /// Percent-escapes all but ASCII letters, digits, `-_.~` and `kept` (Go's path escaping).
    private static func escape(_ text: String, keeping kept: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~")
        allowed.insert(charactersIn: kept)
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// `text` in double quotes with `"` and `\` escaped, as Go's `%q` writes printable text.
    private static func goQuoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
