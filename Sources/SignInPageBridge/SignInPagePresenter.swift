import AuthCore
import FoundationEssentials
import SignInPage

/// Makes the renderer's `SignInPageView` from what the flow shows (`SignInPageScreen`) and what
/// only the page knows: the project's name, the page token and where the forms post. A pure
/// function: the flow holds the rules, the renderer the markup; this says which page stands for
/// which step.
public enum SignInPagePresenter {
    /// What only the page knows, besides the flow's screen.
    public struct Page: Sendable, Equatable {
        /// The project named at the top.
        public var project: SignInPageView.Project
        /// The page token for its forms (`SignInPageGate.issuePageToken`).
        public var csrfToken: String
        /// Where the forms post.
        public var actions: SignInPageView.FormActions
        /// A page of `project` whose forms carry `csrfToken`.
        public init(project: SignInPageView.Project, csrfToken: String, actions: SignInPageView.FormActions = SignInPageView.FormActions()) {
            self.project = project
            self.csrfToken = csrfToken
            self.actions = actions
        }
    }

    /// The page that shows `screen`.
    public static func view(of screen: SignInPageScreen, on page: Page) -> SignInPageView {
        let step: SignInPageView.Step = screen.isBusy ? .waiting(message: "Checking with \(page.project.name)…") : self.step(of: screen, on: page)
        return SignInPageView(project: page.project, step: step, error: problem(of: screen), csrfToken: page.csrfToken, actions: page.actions)
    }

    /// The renderer's step for the flow's.
    static func step(of screen: SignInPageScreen, on page: Page) -> SignInPageView.Step {
        let methods = self.methods(screen.methods)
        switch screen.step {
        case .loading: return .waiting(message: "Finding out how you can sign in to \(page.project.name)…")
        case .methods: return .choose(methods)
        case .password(let email): return .choose(methods, email: email)
        case .requestCode(let channel, let address): return .requestCode(codeChannel(channel), destination: address)
        case .enterCode(let channel, let address, .signIn): return .enterCode(codeChannel(channel), destination: address)
        case .enterCode(.email, let address, .confirmSignUp): return .checkInbox(email: address)
        case .enterCode(.phone, let address, .confirmSignUp): return .enterCode(.sms, destination: address)
        case .enterCode(_, let address, .recovery): return .recoveryCode(email: address)
        case .signUp(let email): return .signUp(email: email)
        case .forgotPassword(let email): return .forgotPassword(email: email)
        case .singleSignOn(let domain): return .ssoDomain(domain: domain)
        case .atProvider(let target, let url): return .leaving(to: url.absoluteString, name: name(of: target))
        case .newPassword(let account): return .newPassword(email: account.name ?? "")
        case .chooseSecondFactor(let factors):
            return .chooseSecondFactor(factors.map { SignInPageView.Factor(id: $0.id, label: label(of: $0)) })
        case .secondFactorCode(let factor, let enrolling):
            let others = (screen.account?.verifiableFactors.count ?? 0) > 1
            return .secondFactor(secondFactor(factor), enrolling: enrolling, others: others && !enrolling)
        case .offerEnrolment: return .offerEnrolment(phone: screen.settings?.phoneEnabled ?? false)
        case .enrolPhone(let number): return .enrollPhone(number: number)
        case .enrolTOTP(_, let setup): return .enrollTOTP(qrImage: setup.qrCode ?? "", secret: setup.secret)
        case .finished(.signedIn(let account)): return .signedIn(who: account.name ?? "a new anonymous user")
        case .finished(.failed): return .ended(.failed)
        case .finished(.cancelled(signedInAs: nil)): return .ended(.cancelled)
        case .finished(.cancelled(signedInAs: let account?)): return .ended(.stoppedSignedIn(who: account.name ?? "a new anonymous user"))
        case .finished(.expired): return .ended(.expired)
        }
    }

    /// The error in words, next to its field; else, on a project that asked for a CAPTCHA,
    /// what the page cannot do.
    static func problem(of screen: SignInPageScreen) -> SignInPageView.Problem? {
        if let message = screen.errorMessage {
            return SignInPageView.Problem(message, field: screen.error?.field.map { field(field: $0, step: screen.step) })
        }
        if screen.captchaUnsupported {
            return SignInPageView.Problem("This project asks for a CAPTCHA, which this sign-in page cannot show. Sign in from your app instead.")
        }
        return nil
    }

    /// The renderer's field for the flow's: on a new account's page and on the new password's,
    /// the password (too weak, the same as before) is the new password.
    static func field(field: SignInPageField, step: SignInPageStep) -> SignInPageView.Field {
        switch field {
        case .email: return .email
        case .phone: return .phone
        case .password:
            switch step {
            case .signUp, .newPassword: return .newPassword
            default: return .password
            }
        case .code: return .code
        case .newPassword: return .newPassword
        case .domain: return .domain
        }
    }

    /// The methods, as the first page lists them.
    static func methods(_ methods: [SignInPageMethod]) -> SignInPageView.Methods {
        SignInPageView.Methods(password: methods.contains(.password), forgotPassword: methods.contains(.forgotPassword),
                               signUp: methods.contains(.signUp), emailCode: methods.contains(.emailCode),
                               smsCode: methods.contains(.phoneCode), sso: methods.contains(.singleSignOn),
                               anonymous: methods.contains(.anonymous),
                               providers: methods.compactMap { method in
                                   guard case .provider(let id) = method else { return nil }
                                   return SignInPageView.Provider(id: id, name: providerName(id))
                               })
    }

    static func codeChannel(_ channel: SignInPageChannel) -> SignInPageView.CodeChannel {
        channel == .email ? .email : .sms
    }

    /// Where the browser is going, named for the user.
    static func name(of target: SignInPageBrowserTarget) -> String {
        switch target {
        case .provider(let id): return providerName(id)
        case .singleSignOn: return "your organisation's sign-in page"
        }
    }

    /// A factor's button: its own name when it has one.
    static func label(of factor: FactorSummary) -> String {
        if let name = factor.friendlyName, !name.isEmpty { return name }
        return factor.type == FactorKind.phone.rawValue ? "Text message" : "Authenticator app"
    }

    /// The factor whose code the page asks for. A phone's number is not known here (the factor's
    /// summary has none), so the page says "your phone"; its name is not a number.
    static func secondFactor(_ factor: FactorSummary) -> SignInPageView.SecondFactor {
        factor.type == FactorKind.phone.rawValue ? .phone(number: "your phone") : .totp
    }

    /// How people know an OAuth provider, by GoTrue's name for it; an unknown one is shown by
    /// that name with a capital letter.
    static func providerName(_ id: String) -> String {
        if let known = knownProviders[id] { return known }
        return id.prefix(1).uppercased() + id.dropFirst()
    }

    static let knownProviders = [
        "apple": "Apple", "azure": "Microsoft", "bitbucket": "Bitbucket", "discord": "Discord", "facebook": "Facebook",
        "figma": "Figma", "fly": "Fly.io", "github": "GitHub", "gitlab": "GitLab", "google": "Google", "kakao": "Kakao",
        "keycloak": "Keycloak", "linkedin_oidc": "LinkedIn", "notion": "Notion", "slack_oidc": "Slack", "spotify": "Spotify",
        "twitch": "Twitch", "twitter": "X (Twitter)", "workos": "WorkOS", "zoom": "Zoom",
    ]
}
