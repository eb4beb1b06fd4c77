import FoundationEssentials

/// What a project publishes about its sign-in (`GET /settings`): which methods it enables and
/// whether new accounts need confirming. A sign-in page offers only what this enables. The
/// adapter reads the answer member by member: one a server leaves out, or writes oddly, offers
/// nothing, and takes nothing away from what the others say.
public struct ProjectSettings: Sendable, Equatable {
    /// Email sign-in (`external.email`): password, code by email, sign-up, password recovery.
    public var emailEnabled: Bool
    /// Phone sign-in (`external.phone`): a code by SMS.
    public var phoneEnabled: Bool
    /// New accounts cannot be created (`disable_signup`), whatever the method.
    public var signUpDisabled: Bool
    /// New email addresses are confirmed automatically (`mailer_autoconfirm`): a sign-up signs in at once.
    public var emailAutoconfirm: Bool
    /// New phone numbers are confirmed automatically (`phone_autoconfirm`).
    public var phoneAutoconfirm: Bool
    /// Enterprise single sign-on through SAML (`saml_enabled`).
    public var singleSignOnEnabled: Bool
    /// Anonymous sign-ins (`external.anonymous_users`).
    public var anonymousSignInsEnabled: Bool
    /// The OAuth providers enabled (`github`, `google`, …), sorted, each named as `/authorize`
    /// takes it.
    public var oauthProviders: [String]

    /// Settings with nothing enabled unless given.
    public init(emailEnabled: Bool = false, phoneEnabled: Bool = false, signUpDisabled: Bool = false,
                emailAutoconfirm: Bool = false, phoneAutoconfirm: Bool = false, singleSignOnEnabled: Bool = false,
                anonymousSignInsEnabled: Bool = false, oauthProviders: [String] = []) {
        self.emailEnabled = emailEnabled
        self.phoneEnabled = phoneEnabled
        self.signUpDisabled = signUpDisabled
        self.emailAutoconfirm = emailAutoconfirm
        self.phoneAutoconfirm = phoneAutoconfirm
        self.singleSignOnEnabled = singleSignOnEnabled
        self.anonymousSignInsEnabled = anonymousSignInsEnabled
        self.oauthProviders = oauthProviders.sorted()
    }

    /// The members of `external` that are not OAuth providers: sign-in methods of their own.
    /// GoTrue lists the Web3 wallets there too (`web3_solana`, `web3_ethereum`), which sign in by
    /// a wallet's signature in the browser, not by a redirect: no provider either.
    public static func isOAuthProvider(_ member: String) -> Bool {
        !["email", "phone", "anonymous_users"].contains(member) && !member.hasPrefix("web3")
    }

    /// Whether `provider` is one of the enabled OAuth providers.
    public func enablesProvider(_ provider: String) -> Bool { oauthProviders.contains(provider) }
}
