import Foundation

/// One-time codes, recovery and changes to the user: `/otp`, `/verify`, `/recover`, `PUT /user`,
/// and the outbox that stands in for email and SMS.
extension DevAuthAPI {
    /// `POST /otp`: a sign-in code by email or SMS; unknown addresses are signed up when
    /// `create_user` is true (GoTrue's default).
    func sendOneTimeCode(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        let phone = Self.phone(in: body)
        let email = Self.email(in: body) ?? ""
        guard !phone.isEmpty || Self.looksLikeEmail(email) else {
            return DevError.response(400, "validation_failed", phone.isEmpty && email.isEmpty
                                     ? "An email address or phone number is required" : "Unable to validate email address: invalid format",
                                     request: request)
        }
        let createUser = body["create_user"] as? Bool ?? true
        // A magic link's PKCE fields (`DevEmailLinks.swift`); an SMS code ignores them once checked, as GoTrue does.
        let pkce = Self.pkceChallenge(in: body, request: request)
        if let refusal = pkce.refusal { return refusal }
        let link = linkOptions(request, pkce: pkce.challenge)
        return state.withLock { store -> DevResponse in
            var user = phone.isEmpty ? store.user(email: email) : store.user(phone: phone)
            // GoTrue's flow state fails on an unknown method after its otp_disabled check, changing nothing.
            if phone.isEmpty, let challenge = pkce.challenge, challenge.method == nil, user != nil || createUser {
                return Self.unexpectedFailure(request)
            }
            if user == nil {
                guard createUser else { return DevError.response(422, "otp_disabled", "Signups not allowed for otp", request: request) }
                let created = DevUser(id: UUID().uuidString.lowercased(), email: email, phone: phone, passwordDigest: "",
                                      userMetadataJSON: Data("{}".utf8), createdAt: now, updatedAt: now, lastSignInAt: nil,
                                      providers: [phone.isEmpty ? "email" : "phone"])
                store.users[created.id] = created
                user = created
            }
            guard let user else { return DevError.response(500, "unexpected_failure", "Unexpected failure", request: request) }
            if phone.isEmpty {
                let type = user.emailConfirmedAt == nil ? "signup" : "magiclink"
                if let challenge = pkce.challenge {
                    keepEmailFlowState(userID: user.id, method: type == "signup" ? "email/signup" : "magiclink", challenge: challenge, store: &store, now: now)
                }
                sendCode(to: user, purpose: "email", type: type, link: link, store: &store, now: now)
                return .json(200, [String: Any]())
            }
            sendCode(to: user, purpose: "sms", type: "sms", store: &store, now: now)
            return .json(200, ["message_id": "dev-\(Self.randomToken())"])
        }
    }

    /// `POST /verify`: exchanges a one-time code for a session, confirming what it was sent for.
    func verify(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        guard let type = body["type"] as? String, !type.isEmpty else {
            return DevError.response(400, "validation_failed", "Verify requires a verification type", request: request)
        }
        let token = body["token"] as? String ?? ""
        let tokenHash = body["token_hash"] as? String ?? ""
        // GoTrue's POST /verify takes exactly one of them; a token hash needs no address.
        guard token.isEmpty != tokenHash.isEmpty else {
            return DevError.response(400, "validation_failed", "Verify requires either a token or a token hash", request: request)
        }
        if !tokenHash.isEmpty { return verifyTokenHash(body, type: type, tokenHash: tokenHash, request: request, now: now) }
        let purpose: String
        switch type {
        case "email", "signup", "magiclink", "invite": purpose = "email"
        case "sms": purpose = "sms"
        case "phone_change": purpose = "phone_change"
        case "recovery": purpose = "recovery"
        case "email_change": purpose = "email_change"
        default: return DevError.response(400, "validation_failed", "Unsupported verification type", request: request)
        }
        let address = ["sms", "phone_change"].contains(purpose) ? Self.phone(in: body) : Self.email(in: body) ?? ""
        return state.withLock { store -> DevResponse in
            let key = "\(address) \(purpose)"
            guard let sent = store.codes[key], sent.code == token, now.timeIntervalSince(sent.sentAt) <= options.otpLifetime,
                  var user = store.users[sent.userID] else {
                return DevError.response(403, "otp_expired", "Token has expired or is invalid", request: request)
            }
            store.codes[key] = nil
            switch purpose {
            case "sms": user.phoneConfirmedAt = user.phoneConfirmedAt ?? now
            case "email_change": user.confirmEmailChange(now: now)
            case "phone_change": user.confirmPhoneChange(now: now)
            default: user.emailConfirmedAt = user.emailConfirmedAt ?? now
            }
            // GoTrue rewrites app_metadata's providers from the identities after every verification.
            user.appMetadataListsProviders = true
            user.lastSignInAt = now
            user.updatedAt = now
            store.users[user.id] = user
            return .json(200, issueSession(for: user, method: purpose == "recovery" ? "recovery" : "otp", store: &store, now: now))
        }
    }

    /// `POST /recover`: a recovery code for a known address; the same empty answer otherwise, so
    /// that the endpoint does not tell who has an account.
    func recover(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        let email = Self.email(in: body) ?? ""
        guard Self.looksLikeEmail(email) else {
            return DevError.response(400, "validation_failed", "Unable to validate email address: invalid format", request: request)
        }
        let pkce = Self.pkceChallenge(in: body, request: request)
        if let refusal = pkce.refusal { return refusal }
        let link = linkOptions(request, pkce: pkce.challenge)
        let failed = state.withLock { store -> Bool in
            guard let user = store.user(email: email) else { return false }
            if let challenge = pkce.challenge {
                // GoTrue makes the flow state only for a known address: an unknown method fails there.
                guard challenge.method != nil else { return true }
                keepEmailFlowState(userID: user.id, method: "recovery", challenge: challenge, store: &store, now: now)
            }
            sendCode(to: user, purpose: "recovery", type: "recovery", link: link, store: &store, now: now)
            return false
        }
        return failed ? Self.unexpectedFailure(request) : .json(200, [String: Any]())
    }

    /// `PUT /user`. A new password ends every other session of the user, as GoTrue does. A new
    /// email or phone is confirmed by the code sent to it (an email at once when the project
    /// auto-confirms); confirming either makes an anonymous user permanent. The checks come in
    /// GoTrue's order: the fields' formats, the anonymous user's password, duplicates, then
    /// reauthentication and the password itself.
    func updateUser(_ body: [String: Any], user: DevUser, sessionID: String, request: DevRequest, now: Date) -> DevResponse {
        // GoTrue treats an empty email or phone as not given.
        let newEmail = Self.isAbsent(body["email"]) ? nil : Self.email(in: body)
        if let newEmail, !Self.looksLikeEmail(newEmail) {
            return DevError.response(400, "validation_failed", "Unable to validate email address: invalid format", request: request)
        }
        var newPhone: String?
        var channel = "sms"
        if let phone = body["phone"] as? String, !phone.isEmpty {
            // GoTrue's validatePhone: drop a leading "+" and the spaces, then E.164's digits.
            let digits = (phone.hasPrefix("+") ? String(phone.dropFirst()) : phone).replacingOccurrences(of: " ", with: "")
            guard digits.range(of: "^[1-9][0-9]{1,14}$", options: .regularExpression) != nil else {
                return DevError.response(400, "validation_failed", "Invalid phone number format (E.164 required)", request: request)
            }
            if let requested = body["channel"] as? String, !requested.isEmpty { channel = requested }
            // This server's SMS provider stands in for Twilio, the one GoTrue also sends WhatsApp through.
            guard ["sms", "whatsapp"].contains(channel) else {
                return DevError.response(400, "validation_failed", "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.", request: request)
            }
            newPhone = digits
        }
        let password = body["password"] as? String
        recordSecrets([password])
        if let password, password.count < 6 {
            return DevError.response(422, "weak_password", "Password should be at least 6 characters.", request: request,
                                     extra: ["weak_password": ["reasons": ["length"]]])
        }
        return state.withLock { store -> DevResponse in
            guard var current = store.users[user.id] else {
                return DevError.response(404, "user_not_found", "User not found", request: request)
            }
            // A password alone would leave an anonymous user with nothing to sign in with.
            if current.isAnonymous, let password, !password.isEmpty, newEmail == nil, newPhone == nil {
                return DevError.response(422, "validation_failed", "Updating password of an anonymous user without an email or phone is not allowed", request: request)
            }
            if let refusal = ssoManagedRefusal(current, body: body, newEmail: newEmail, newPhone: newPhone, request: request) { return refusal }
            if let newEmail, newEmail != current.email, store.user(email: newEmail) != nil {
                return DevError.response(422, "email_exists", "A user with this email address has already been registered", request: request)
            }
            if let newPhone, newPhone != current.phone, store.user(phone: newPhone) != nil {
                return DevError.response(422, "phone_exists", "A user with this phone number has already been registered", request: request)
            }
            if password != nil, store.requireReauthentication,
               store.sessions[sessionID].map({ now.timeIntervalSince($0.createdAt) > store.reauthenticationWindow }) ?? true {
                // GoTrue checks (and uses up) the code before it looks at the password itself.
                let nonce = body["nonce"] as? String ?? ""
                if nonce.isEmpty {
                    return DevError.response(400, "reauthentication_needed", "Password update requires reauthentication", request: request)
                }
                let key = "\(current.email) reauthentication"
                guard let sent = store.codes[key], sent.code == nonce, now.timeIntervalSince(sent.sentAt) <= options.otpLifetime else {
                    return DevError.response(422, "reauthentication_not_valid", "Nonce has expired or is invalid", request: request)
                }
                store.codes[key] = nil
            }
            if let password {
                guard Self.digest(password) != current.passwordDigest else {
                    return DevError.response(422, "same_password", "New password should be different from the old password.", request: request)
                }
                current.passwordDigest = Self.digest(password)
                for other in store.sessions.values where other.userID == user.id && other.id != sessionID {
                    store.deleteSession(other.id)
                }
            }
            if let data = body["data"] as? [String: Any] {
                var metadata = current.userMetadata
                for (key, value) in data { metadata[key] = value is NSNull ? nil : value }
                current.userMetadataJSON = (try? JSONSerialization.data(withJSONObject: metadata)) ?? current.userMetadataJSON
            }
            if let newEmail, newEmail != current.email {
                if store.mailerAutoconfirm {
                    // Confirmed without a code, as GoTrue lets an anonymous user add an email
                    // like a sign-up would (this server does so for every user).
                    current.newEmail = newEmail
                    current.confirmEmailChange(now: now)
                } else {
                    current.newEmail = newEmail
                    sendCode(to: current, purpose: "email_change", type: "email_change", link: linkOptions(request, pkce: nil), store: &store, now: now)
                }
            }
            if let newPhone, newPhone != current.phone {
                // The project does not auto-confirm phones (`phone_autoconfirm` is false).
                current.newPhone = newPhone
                sendCode(to: current, purpose: "phone_change", type: "phone_change", channel: channel, store: &store, now: now)
            }
            current.updatedAt = now
            store.users[current.id] = current
            return .json(200, userJSON(current))
        }
    }

    /// `GET /reauthenticate`: a code for the signed-in user's next password change, by email
    /// (SMS reauthentication is not implemented here).
    func reauthenticate(user: DevUser, request: DevRequest, now: Date) -> DevResponse {
        // An anonymous user has neither; GoTrue says so before anything else.
        if user.email.isEmpty, user.phone.isEmpty {
            return DevError.response(400, "validation_failed", "Reauthentication requires the user to have an email or a phone number", request: request)
        }
        guard !user.email.isEmpty else {
            return DevError.response(422, "validation_failed", "Reauthentication by SMS is not supported by the development server", request: request)
        }
        guard user.emailConfirmedAt != nil else {
            return DevError.response(422, "email_not_confirmed", "Please verify your email first.", request: request)
        }
        // GoTrue's SMTP_MAX_FREQUENCY: one code a minute (unless the dev setting changed it).
        let waitLeft = state.withLock { store -> Int? in
            if let sent = store.codes["\(user.email) reauthentication"], now.timeIntervalSince(sent.sentAt) < store.smtpMaxFrequency {
                return Int(store.smtpMaxFrequency - now.timeIntervalSince(sent.sentAt))
            }
            sendCode(to: user, purpose: "reauthentication", type: "reauthentication", store: &store, now: now)
            return nil
        }
        if let waitLeft {
            return DevError.response(429, "over_email_send_rate_limit", "For security purposes, you can only request this after \(waitLeft) seconds.", request: request)
        }
        return .json(200, [String: Any]())
    }

    /// `GET /admin/dev/outbox?to=ADDRESS`: the messages sent to an address (all when absent), oldest first.
    /// Each is `{to, channel, type, code, sent_at, text}`, and an email with a link also has
    /// `link` and `token_hash` (`DevEmailLinks.swift`); MFA phone challenges have type `mfa`
    /// and channel `sms` (or `whatsapp` when the challenge asked for it).
    func outbox(_ request: DevRequest) -> DevResponse {
        let wanted = request.query["to"].map { $0.contains("@") ? $0.lowercased() : DevStore.normalizedPhone($0) }
        let messages = state.withLock { store in store.outbox.filter { wanted == nil || $0.to == wanted } }
        return .json(200, ["messages": messages.map(\.json)])
    }

    /// `POST /admin/dev/settings {"mailer_autoconfirm": false}`: switches email confirmation.
    /// Also `captcha_token`, `update_password_require_reauthentication`, `reauthentication_window`,
    /// `anonymous_users` (GoTrue's `EXTERNAL_ANONYMOUS_USERS_ENABLED`), `allow_low_aal`
    /// (GoTrue's `SESSIONS_ALLOW_LOW_AAL` in seconds; `null` or 0 turns it off), `manual_linking`
    /// and `saml_enabled` (`DevIdentities.swift`).
    /// `smtp_max_frequency` and `sms_max_frequency` (seconds) are GoTrue's limits on sending again.
    /// `body` has its `null`s dropped already, so a `null` is looked for in the raw `request`.
    func changeSettings(_ body: [String: Any], request: DevRequest) -> DevResponse {
        if let autoconfirm = body["mailer_autoconfirm"] as? Bool { state.withLock { $0.mailerAutoconfirm = autoconfirm } }
        if let captcha = body["captcha_token"] as? String { state.withLock { $0.captchaToken = captcha.isEmpty ? nil : captcha } }
        if let required = body["update_password_require_reauthentication"] as? Bool { state.withLock { $0.requireReauthentication = required } }
        if let window = body["reauthentication_window"] as? Double, window >= 0 { state.withLock { $0.reauthenticationWindow = window } }
        if let frequency = body["smtp_max_frequency"] as? Double, frequency >= 0 { state.withLock { $0.smtpMaxFrequency = frequency } }
        if let frequency = body["sms_max_frequency"] as? Double, frequency >= 0 { state.withLock { $0.smsMaxFrequency = frequency } }
        if let anonymous = body["anonymous_users"] as? Bool { state.withLock { $0.anonymousUsers = anonymous } }
        changeLinkingSettings(body)
        if let allowance = body["allow_low_aal"] as? Double, allowance >= 0 {
            state.withLock { $0.allowLowAAL = allowance > 0 ? allowance : nil }
        } else if ((try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any])?["allow_low_aal"] is NSNull {
            state.withLock { $0.allowLowAAL = nil }
        }
        return DevResponse(status: 204)
    }

    /// The request's `email`, trimmed and lower-cased as GoTrue stores it; nil when absent.
    static func email(in body: [String: Any]) -> String? {
        (body["email"] as? String)?.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The request's `phone` as GoTrue stores it (digits only); empty when absent.
    static func phone(in body: [String: Any]) -> String {
        (body["phone"] as? String).map(DevStore.normalizedPhone) ?? ""
    }

    /// Makes a 6-digit code for `purpose`, replacing an earlier one, and "sends" it. A change's code
    /// goes to the new address; `channel` is the SMS channel (`sms` or `whatsapp`). An email of a
    /// link type carries a link made by `link` (`DevEmailLinks.swift`).
    func sendCode(to user: DevUser, purpose: String, type: String, channel: String = "sms", link: DevLinkOptions = DevLinkOptions(),
                  store: inout DevStore, now: Date) {
        let address: String
        switch purpose {
        case "sms": address = user.phone
        case "phone_change": address = user.newPhone ?? user.phone
        case "email_change": address = user.newEmail ?? user.email
        default: address = user.email
        }
        let isSMS = ["sms", "phone_change"].contains(purpose)
        var generator = SystemRandomNumberGenerator()
        let code = String(format: "%06d", Int(generator.next(upperBound: UInt(1_000_000))))
        let tokenHash = Self.tokenHash(address: address, code: code, pkce: link.pkce)
        store.codes["\(address) \(purpose)"] = DevOneTimeCode(code: code, purpose: purpose, userID: user.id, sentAt: now, type: type, tokenHash: tokenHash)
        var message = DevMessage(to: address, channel: isSMS ? channel : "email", type: type, code: code, sentAt: now)
        if !isSMS, let fields = linkFields(type: type, tokenHash: tokenHash, redirectTo: link.redirectTo) {
            (message.link, message.tokenHash) = (fields.link, fields.tokenHash)
        }
        deliver(message, store: &store)
    }

    /// "Sends" a message: into the outbox, and into `DevServerOptions.outboxFile` when set.
    func deliver(_ message: DevMessage, store: inout DevStore) {
        store.outbox.append(message)
        if let path = options.outboxFile, let line = try? JSONSerialization.data(withJSONObject: message.json, options: [.sortedKeys]) {
            LineFile(path: path).append(line)
        }
    }
}

extension DevMessage {
    /// The message as the outbox shows it.
    var json: [String: Any] {
        var json: [String: Any] = ["to": to, "channel": channel, "type": type, "code": code, "sent_at": DevAuthAPI.timestamp(sentAt),
                                   "text": channel == "email" ? "Your \(type) code is \(code)" : "Your code is \(code)"]
        if let link { json["link"] = link }
        if let tokenHash { json["token_hash"] = tokenHash }
        return json
    }
}

extension DevUser {
    /// Makes the pending `newEmail` the user's confirmed email (GoTrue's emailChangeVerify): the
    /// user gets an email identity if it had none, and an anonymous user becomes permanent.
    mutating func confirmEmailChange(now: Date) {
        guard let newEmail else { return }
        email = newEmail
        self.newEmail = nil
        emailConfirmedAt = now
        if !providers.contains("email") { providers.append("email") }
        isAnonymous = false
    }

    /// Makes the pending `newPhone` the user's confirmed phone (GoTrue's smsVerify for
    /// `phone_change`): a phone identity if it had none, and an anonymous user becomes permanent.
    mutating func confirmPhoneChange(now: Date) {
        guard let newPhone else { return }
        phone = newPhone
        self.newPhone = nil
        phoneConfirmedAt = now
        if !providers.contains("phone") { providers.append("phone") }
        isAnonymous = false
    }
}
