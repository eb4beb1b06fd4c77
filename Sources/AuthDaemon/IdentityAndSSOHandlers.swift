import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// Handlers of `session.resend`, `identities.list|link|unlink` and `sso.begin`.
extension DaemonMethods {
    static func registerIdentityAndSSOMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.Resend.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let address = contactAddress(email: parameters.email, phone: parameters.phone)
            // `validate()` has let through only the purposes there are, each with its kind of address.
            let purpose = parameters.type.flatMap(ResendRequest.Purpose.init(rawValue:)) ?? (address.field == "email" ? .signup : .sms)
            let request = ResendRequest(address: address, purpose: purpose)
            return try await sendMessage(profile, to: address, redirectTo: parameters.redirectTo, recovery: false, owner: connection.client.app) { link in
                await profile.accounts.resend(request, captchaToken: parameters.captchaToken, link: link)
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
            return try await beginBrowserFlow(profile, .linkIdentity(provider: parameters.provider, scopes: parameters.scopes),
                                              redirectTo: parameters.redirectTo, owner: connection.client.app)
        }

        table.register(Methods.UnlinkIdentity.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // `validate()` has let through only a UUID.
            let id = FactorID.canonical(parameters.identityID) ?? parameters.identityID
            switch await profile.accounts.unlinkIdentity(id) {
            case .success: return .init(profile: profile.profile, identityID: id)
            case .failure(let failure): throw IdentityErrorText.error(failure)
            }
        }

        table.register(Methods.SingleSignOnBegin.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // `validate()` has let through exactly one of an email domain and a UUID.
            let target: SingleSignOnTarget
            if let domain = parameters.domain?.trimmingWhitespace() {
                target = .domain(domain.lowercased())
            } else {
                let id = parameters.providerID?.trimmingWhitespace() ?? ""
                target = .provider(FactorID.canonical(id) ?? id)
            }
            return try await beginBrowserFlow(profile, .singleSignOn(target), redirectTo: parameters.redirectTo, owner: connection.client.app)
        }
    }

    /// A linked identity as `identities.list` answers it.
    private static func listed(_ identity: LinkedIdentity) -> Methods.ListIdentities.Identity {
        .init(identityID: identity.id, provider: identity.provider, email: identity.email, createdAt: identity.createdAt,
              lastSignInAt: identity.lastSignInAt)
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
