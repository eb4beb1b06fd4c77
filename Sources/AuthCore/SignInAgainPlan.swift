import FoundationEssentials

/// How to sign in again to a session the server ended: the way the user signed in to it, read
/// from its last access token (`amr`, `app_metadata.provider`, `email`, `phone`). The "sign in
/// again" notice offers it; the claims are read without checking the signature, as the token
/// came from the server itself and only picks which sign-in to start. An address or provider
/// outside its `ClaimShape` makes no plan: the notice shows the plan as a command to run.
public enum SignInAgainPlan: Sendable, Equatable {
    /// A browser sign-in with this OAuth provider (`github`, `google`, …).
    case browser(provider: String)
    /// Enterprise SSO through the project's SAML provider with this id.
    case singleSignOn(providerID: String)
    /// Email (or phone) and password.
    case password(ContactAddress)
    /// A one-time code or magic link sent to this address.
    case code(ContactAddress)
    /// An anonymous user: nobody can sign in as it again.
    case anonymous
    /// Nothing tells how; `authctl login` asks.
    case unknown

    /// The plan for the session whose last access token was `accessToken`. The most recent
    /// first-factor method decides (GoTrue lists `amr` newest first; a second factor such as
    /// `totp` is asked for by the sign-in itself).
    public init(accessToken: String) {
        guard let claims = TokenClaims(accessToken: accessToken),
              claims.wellFormed(["amr", "email", "phone", "is_anonymous", "app_metadata"]) else {
            self = .unknown
            return
        }
        if claims.isAnonymous == true {
            self = .anonymous
            return
        }
        let address = Self.address(email: Self.nonEmpty(claims.email), phone: Self.nonEmpty(claims.phone))
        for entry in claims.amr ?? [] {
            switch entry.method {
            case "oauth", "id_token":
                // The token does not name this sign-in's provider: `app_metadata.provider` is the
                // account's first identity's. Of the OAuth providers linked, one is unambiguous.
                let linked = claims.appMetadata?.providers ?? claims.appMetadata?.provider.map { [$0] } ?? []
                let candidates = Set(linked.filter { !["email", "phone", "anonymous"].contains($0) && !$0.hasPrefix("sso:") && !$0.isEmpty })
                if candidates.count == 1, let provider = candidates.first, ClaimShape.isProviderName(provider) {
                    self = .browser(provider: provider)
                    return
                }
            case "sso/saml":
                // GoTrue's SSO provider ids are UUIDs (the shape `FactorID` checks).
                if let provider = Self.nonEmpty(entry.provider), FactorID.canonical(provider) != nil {
                    self = .singleSignOn(providerID: provider)
                    return
                }
            case "password":
                if let address {
                    self = .password(address)
                    return
                }
            case "otp", "magiclink", "email/signup", "invite", "recovery":
                if let address {
                    self = .code(address)
                    return
                }
            default:
                continue   // a second factor (totp, phone, mfa/…) or a method of no use here
            }
        }
        self = .unknown
    }

    /// `authctl`'s arguments for this sign-in of `profile`, nil when there is none to start
    /// (an anonymous user, or nothing known).
    public func authctlArguments(profile: String) -> [String]? {
        let base = ["login", "--profile", profile]
        switch self {
        case .browser(let provider): return base + ["--provider", provider]
        case .singleSignOn(let providerID): return base + ["--sso-provider", providerID]
        case .password(.email(let email)): return base + ["--email", email]
        // authctl's password sign-in takes an email; a phone signs in with a code instead.
        case .password(.phone(let phone)), .code(.phone(let phone)): return base + ["--otp", "--phone", phone]
        case .code(.email(let email)): return base + ["--otp", "--email", email]
        case .anonymous, .unknown: return nil
        }
    }

    /// The command for people to run for this sign-in of `profile` (the notice's text), each word
    /// quoted for a POSIX shell; for a plan with none, the password sign-in with `ADDRESS` to
    /// fill in.
    public func commandLine(profile: String) -> String {
        guard let arguments = authctlArguments(profile: profile) else {
            return ShellWord.commandLine(["authctl", "login", "--profile", profile, "--email"]) + " ADDRESS"
        }
        return ShellWord.commandLine(["authctl"] + arguments)
    }

    /// Whether the sign-in runs in a terminal: it asks for a password or a code there, and for a
    /// second factor's code after any sign-in to an account that has one (`secondFactor`). A
    /// browser sign-in alone needs none.
    public func needsTerminal(secondFactor: Bool) -> Bool {
        switch self {
        case .browser, .singleSignOn: return secondFactor
        case .password, .code, .anonymous, .unknown: return true
        }
    }

    /// Whether the sign-in is made on authd's sign-in page in the browser: whenever it asks the
    /// user for something (`asks`, as `needsTerminal` says: a password, a code, a second factor),
    /// or nothing tells how; a browser sign-in alone goes straight to its provider.
    public func opensSignInPage(asks: Bool) -> Bool {
        switch self {
        case .browser, .singleSignOn: return asks
        case .password, .code, .unknown, .anonymous: return true
        }
    }

    /// The sign-in page's first form and filled-in address for this sign-in: the way the account
    /// signed in before.
    public var signInPageOptions: SignInPageFlow.Options {
        switch self {
        case .password(.email(let email)): return SignInPageFlow.Options(email: email, method: .password)
        case .code(.email(let email)): return SignInPageFlow.Options(email: email, method: .emailCode)
        // The page signs a phone in with a code, whichever way it signed in before.
        case .password(.phone(let phone)), .code(.phone(let phone)): return SignInPageFlow.Options(phone: phone, method: .phoneCode)
        case .browser, .singleSignOn, .unknown, .anonymous: return SignInPageFlow.Options()
        }
    }

    /// The email, else the phone; none when the one that would be used is not of its shape (an
    /// odd email does not fall back to the phone: something is wrong with these claims).
    private static func address(email: String?, phone: String?) -> ContactAddress? {
        if let email { return ClaimShape.isEmail(email) ? .email(email) : nil }
        if let phone { return ClaimShape.isPhone(phone) ? .phone(phone) : nil }
        return nil
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }
}
