extension SignInPageView {
    /// Where each of the page's forms posts to: paths on the server that serves the page.
    ///
    /// Every form is `method="post"` and carries the page's CSRF token. A page's secondary actions
    /// ("Forgot password?", "Create an account") post to `go` with a `to` field naming the page to show
    /// (`Destination`).
    public struct FormActions: Sendable, Equatable {
        /// Email and password sign-in.
        public var signIn: String
        /// Account creation.
        public var signUp: String
        /// Sends a one-time code (email or phone field).
        public var requestCode: String
        /// Checks a one-time code: sign-in, sign-up confirmation, password recovery.
        public var verifyCode: String
        /// Sends the last code or confirmation again.
        public var resendCode: String
        /// Starts an OAuth provider's sign-in (`provider` field).
        public var provider: String
        /// Starts enterprise SSO (`domain` field).
        public var sso: String
        /// Sends a password recovery code (`email` field).
        public var forgotPassword: String
        /// A new password, after the recovery code signed in.
        public var resetPassword: String
        /// Checks a second factor's code, or the first code of a factor being enrolled.
        public var verifyFactor: String
        /// Signs in as a new anonymous user.
        public var anonymous: String
        /// Picks a second factor (`factor` field).
        public var chooseFactor: String
        /// Adds a second factor (`factor_type` field: `totp` or `phone`; `phone` with its number).
        public var enroll: String
        /// Declines adding a second factor.
        public var skipEnrolment: String
        /// Moves to another page of the flow (`to` field).
        public var go: String
        /// Ends the sign-in.
        public var cancel: String
        /// The page itself, which every form's answer leads back to.
        public var page: String

        /// Every action under `base` (`/sign-in/password`, `/sign-in/code`, …).
        public init(base: String = "/sign-in") {
            signIn = base + "/password"
            signUp = base + "/sign-up"
            requestCode = base + "/code/send"
            verifyCode = base + "/code/verify"
            resendCode = base + "/code/resend"
            provider = base + "/provider"
            sso = base + "/sso"
            forgotPassword = base + "/recover"
            resetPassword = base + "/recover/verify"
            verifyFactor = base + "/factor/verify"
            anonymous = base + "/anonymous"
            chooseFactor = base + "/factor/choose"
            enroll = base + "/factor/enroll"
            skipEnrolment = base + "/factor/skip"
            go = base + "/go"
            cancel = base + "/cancel"
            page = base
        }

        /// Every action's path.
        public var all: Set<String> {
            [signIn, signUp, requestCode, verifyCode, resendCode, provider, sso, forgotPassword, resetPassword, verifyFactor,
             anonymous, chooseFactor, enroll, skipEnrolment, go, cancel]
        }
    }

    /// The names of the forms' fields, as the server reads them.
    public enum Field: String, Sendable, Equatable, CaseIterable {
        /// An email address.
        case email
        /// The current password.
        case password
        /// A new password (sign-up, recovery).
        case newPassword = "new_password"
        /// A one-time code: email, SMS, recovery, TOTP.
        case code
        /// A phone number.
        case phone
        /// An SSO email domain.
        case domain
        /// The hidden CSRF token, in every form.
        case csrfToken = "csrf_token"
        /// The hidden OAuth provider id.
        case provider
        /// The hidden destination of a `go` form.
        case to
        /// The hidden id of a chosen second factor.
        case factor
        /// The hidden type of a factor to add: `totp` or `phone`.
        case factorType = "factor_type"

        /// Whether the page may show a value in this field: never for a password or a code.
        var mayBePrefilled: Bool {
            switch self {
            case .email, .phone, .domain: return true
            case .password, .newPassword, .code, .csrfToken, .provider, .to, .factor, .factorType: return false
            }
        }
    }

    /// Where a `go` form moves to (its `to` field).
    public enum Destination: String, Sendable, Equatable, CaseIterable {
        /// The first page.
        case choose
        /// Account creation.
        case signUp = "sign-up"
        /// A one-time code by email.
        case emailCode = "email-code"
        /// A one-time code by text message.
        case smsCode = "sms-code"
        /// Enterprise SSO.
        case sso
        /// Password recovery.
        case forgotPassword = "forgot-password"
        /// A phone number for a new SMS factor.
        case enrollPhone = "enroll-phone"
        /// The list of the user's second factors, to use another one.
        case chooseFactor = "choose-factor"
    }
}
