import FoundationEssentials

/// Where a one-time code goes on the sign-in page.
public enum SignInPageChannel: String, Sendable, Equatable, CaseIterable {
    /// By email.
    case email
    /// By SMS.
    case phone
}

/// A way to sign in that the sign-in page can offer. Which it offers follows the project's
/// settings (`offered(by:)`), and a form posted for one it does not offer is refused.
public enum SignInPageMethod: Sendable, Hashable, CustomStringConvertible {
    /// Email and password.
    case password
    /// A one-time code sent by email.
    case emailCode
    /// A one-time code sent by SMS.
    case phoneCode
    /// A new account with an email address and a password.
    case signUp
    /// A recovery code by email, then a new password.
    case forgotPassword
    /// Enterprise single sign-on, found by the email domain.
    case singleSignOn
    /// A new anonymous user.
    case anonymous
    /// A browser sign-in at an OAuth provider (`github`, `google`, …) with PKCE.
    case provider(String)

    /// The methods `settings` enable, in the order the page lists them: the forms first, then
    /// the anonymous sign-in, then a button per provider (sorted). Sign-up, and the one-time
    /// codes' creating of new users, need sign-ups enabled; an anonymous sign-in is a sign-up too.
    public static func offered(by settings: ProjectSettings) -> [SignInPageMethod] {
        var methods: [SignInPageMethod] = []
        if settings.emailEnabled { methods += [.password, .emailCode] }
        if settings.phoneEnabled { methods.append(.phoneCode) }
        if settings.singleSignOnEnabled { methods.append(.singleSignOn) }
        if settings.emailEnabled, !settings.signUpDisabled { methods.append(.signUp) }
        if settings.emailEnabled { methods.append(.forgotPassword) }
        if settings.anonymousSignInsEnabled, !settings.signUpDisabled { methods.append(.anonymous) }
        // WorkOS signs in only with a connection or an organisation named on `/authorize`, which
        // a button cannot know: it is left to apps that do.
        return methods + settings.oauthProviders.filter { $0 != "workos" }.map(SignInPageMethod.provider)
    }

    /// Whether the method has a form of its own (the others are buttons).
    public var hasForm: Bool {
        switch self {
        case .password, .emailCode, .phoneCode, .signUp, .forgotPassword, .singleSignOn: return true
        case .anonymous, .provider: return false
        }
    }

    /// The methods with a form of their own, which a page can be opened on.
    public static let forms: [SignInPageMethod] = [.password, .emailCode, .phoneCode, .signUp, .forgotPassword, .singleSignOn]

    /// The method with a form whose name (`description`) is `name`; nil for any other name.
    public init?(form name: String) {
        guard let method = Self.forms.first(where: { $0.description == name }) else { return nil }
        self = method
    }

    /// The method's name, for logs and on the wire (`session.beginInteractiveSignIn`'s `method`).
    public var description: String {
        switch self {
        case .password: return "password"
        case .emailCode: return "email_code"
        case .phoneCode: return "phone_code"
        case .signUp: return "sign_up"
        case .forgotPassword: return "forgot_password"
        case .singleSignOn: return "sso"
        case .anonymous: return "anonymous"
        case .provider(let name): return "provider(\(name))"
        }
    }
}

/// Where a browser sign-in goes.
public enum SignInPageBrowserTarget: Sendable, Equatable {
    /// An OAuth provider, by the name `/authorize` takes.
    case provider(String)
    /// The project's SAML identity provider for an email domain (`POST /sso`).
    case singleSignOn(domain: String)
}
