import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// Handlers of `session.resend`, `identities.list|link|unlink` and `sso.begin`.
extension DaemonMethods {
    static func registerIdentityAndSSOMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.Resend.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let address = try contactAddress(email: parameters.email, phone: parameters.phone)
            let purpose = try resendPurpose(parameters.type, for: address)
            let request = ResendRequest(address: address, purpose: purpose)
            let captcha = try captchaToken(parameters.captchaToken)
            return try await sendMessage(profile, to: address, redirectTo: parameters.redirectTo, recovery: false, owner: connection.client.app) { link in
                await profile.accounts.resend(request, captchaToken: captcha, link: link)
            }
        }

        table.register(Methods.ListIdentities.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.accounts.user() {
            case .success(let record): return .init(profile: profile.profile, identities: record.identities.map(listed))
            case .failure(let failure): throw SignInErrorText.error(failure)
            }
        }

        table.register(Methods.LinkIdentity.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            guard isProviderName(parameters.provider) else { throw invalidParams("'provider' must be a provider name such as google or github") }
            return try await beginBrowserFlow(profile, .linkIdentity(provider: parameters.provider, scopes: parameters.scopes),
                                              redirectTo: parameters.redirectTo, owner: connection.client.app)
        }

        table.register(Methods.UnlinkIdentity.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            guard let id = FactorID.canonical(parameters.identityID) else {
                throw invalidParams("'identity_id' must be an identity's id as identities.list shows it (a UUID)")
            }
            switch await profile.accounts.unlinkIdentity(id) {
            case .success: return .init(profile: profile.profile, identityID: id)
            case .failure(let failure): throw IdentityErrorText.error(failure)
            }
        }

        table.register(Methods.SingleSignOnBegin.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let target: SingleSignOnTarget
            switch (parameters.domain.map(trimmed), parameters.providerID.map(trimmed)) {
            case (let domain?, nil) where isDomainName(domain): target = .domain(domain.lowercased())
            case (nil, let id?):
                guard let canonical = FactorID.canonical(id) else { throw invalidParams("'provider_id' must be an SSO provider's id (a UUID)") }
                target = .provider(canonical)
            case (_?, nil): throw invalidParams("'domain' must be an email domain such as example.com")
            default: throw invalidParams("give exactly one of 'domain' and 'provider_id'")
            }
            return try await beginBrowserFlow(profile, .singleSignOn(target), redirectTo: parameters.redirectTo, owner: connection.client.app)
        }
    }

    /// What a resend confirms: as asked, or a sign-up's confirmation by the address's kind.
    private static func resendPurpose(_ type: String?, for address: ContactAddress) throws(RPCErrorObject) -> ResendRequest.Purpose {
        let byAddress: ResendRequest.Purpose = address.field == "email" ? .signup : .sms
        guard let type else { return byAddress }
        guard let purpose = ResendRequest.Purpose(rawValue: type) else {
            throw invalidParams("'type' must be one of \(ResendRequest.Purpose.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let forEmail = purpose == .signup || purpose == .emailChange
        guard forEmail == (address.field == "email") else {
            throw invalidParams("'type' \(type) goes with \(forEmail ? "an 'email'" : "a 'phone'")")
        }
        return purpose
    }

    /// A linked identity as `identities.list` answers it.
    private static func listed(_ identity: LinkedIdentity) -> Methods.ListIdentities.Identity {
        .init(identityID: identity.id, provider: identity.provider, email: identity.email, createdAt: identity.createdAt,
              lastSignInAt: identity.lastSignInAt)
    }

    private static func trimmed(_ text: String) -> String { text.trimmingWhitespace() }

    /// Letters, digits, hyphens and dots, with a dot and no empty label: what an email domain is.
    private static func isDomainName(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= 253 && labels.count >= 2 && labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.utf8.allSatisfy { $0 == 0x2D || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        }
    }
}

/// Refusals of `identities.unlink`, saying what to do.
enum IdentityErrorText {
    static func error(_ failure: AccountFailure) -> RPCErrorObject {
        guard case .server(.http(_, let code?, _, _)) = failure else { return SignInErrorText.error(failure) }
        switch code {
        case "single_identity_not_deletable":
            return .application(.requestRejected, "this is the account's only identity: link another first ('authctl identities link PROVIDER'), or the account could no longer sign in")
        case "identity_not_found":
            return .application(.requestRejected, "the account has no such identity: 'authctl identities' lists them")
        case "manual_linking_disabled":
            return .application(.requestRejected, "this project does not allow linking or unlinking identities (manual_linking_disabled)")
        default:
            return SignInErrorText.error(failure)
        }
    }
}
