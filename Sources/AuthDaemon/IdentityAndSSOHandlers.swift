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
            case .success(let record): return .init(profile: profile.profile, identities: ListedIdentities.read(record.json))
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

    private static func trimmed(_ text: String) -> String { text.trimmingWhitespace() }

    /// Letters, digits, hyphens and dots, with a dot and no empty label: what an email domain is.
    private static func isDomainName(_ text: String) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        return text.utf8.count <= 253 && labels.count >= 2 && labels.allSatisfy { label in
            !label.isEmpty && label.count <= 63 && label.utf8.allSatisfy { $0 == 0x2D || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        }
    }
}

/// The identities in GoTrue's user object, as `identities.list` answers them.
enum ListedIdentities {
    static func read(_ json: Data) -> [Methods.ListIdentities.Identity] {
        guard let user = try? JSONDecoder().decode(User.self, from: json) else { return [] }
        return (user.identities ?? []).compactMap(\.value).compactMap { wire in
            guard let id = wire.identity_id, !id.isEmpty, !wire.provider.isEmpty else { return nil }
            let email = wire.email ?? wire.identity_data?.email
            return .init(identityID: id, provider: wire.provider, email: email?.isEmpty == false ? email : nil,
                         createdAt: wire.created_at, lastSignInAt: wire.last_sign_in_at)
        }
    }

    private struct User: Decodable { var identities: [Lenient<Wire>]? }
    private struct Wire: Decodable {
        var identity_id: String?
        var provider: String
        var email: String?
        var identity_data: IdentityData?
        var created_at: String?
        var last_sign_in_at: String?
    }
    private struct IdentityData: Decodable { var email: String? }

    /// An element that decodes to nil instead of failing the list: one odd identity must not hide the others.
    private struct Lenient<Value: Decodable>: Decodable {
        var value: Value?
        init(from decoder: any Decoder) { value = try? Value(from: decoder) }
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
