extension SignInPageView {
    /// What a sign-in page asks or says: one question per page.
    ///
    /// Pre-filled values are the non-secret ones the user typed before (an email, a phone number, a
    /// domain), so that going back or retrying does not make them type it again.
    public enum Step: Sendable, Equatable {
        /// The first page: the ways the project offers to sign in, email and password first.
        case choose(Methods, email: String = "")
        /// A new account: email and a new password.
        case signUp(email: String = "")
        /// After a sign-up that needs confirming: "check your inbox", with a field for the email's code.
        case checkInbox(email: String)
        /// Asks where to send a one-time code: an email address or a phone number.
        case requestCode(CodeChannel, destination: String = "")
        /// Asks for the one-time code sent to `destination`.
        case enterCode(CodeChannel, destination: String)
        /// Enterprise SSO: asks for the organisation's email domain.
        case ssoDomain(domain: String = "")
        /// A forgotten password: asks for the account's email, to send a recovery code to.
        case forgotPassword(email: String = "")
        /// The recovery code sent to `email`, and the new password.
        case resetPassword(email: String)
        /// A second factor to verify before the sign-in is complete.
        case secondFactor(SecondFactor)
        /// Turning on an authenticator app: the server's QR image, the secret for typing in by hand,
        /// and a field for the first code. `qrImage` is shown only when it is a
        /// `data:image/svg+xml` URI (what GoTrue returns); anything else is ignored.
        case enrollTOTP(qrImage: String, secret: String)
        /// On the way to another site (an OAuth provider, an SSO identity provider): a page that
        /// moves on by itself (`<meta http-equiv="refresh">`) and has a link to do so. The server answers
        /// a provider's or SSO's form with this page rather than a redirect, because `form-action 'self'`
        /// also stops a form's redirect to another origin. Only an `https:` URL (or `http:` to a
        /// loopback address) is followed.
        case leaving(to: String, name: String)
        /// Done: "Signed in as `who`; you can close this tab".
        case signedIn(who: String)
        /// The sign-in is over without a session.
        case ended(Ending)
    }

    /// The ways a project offers to sign in, as its settings say.
    public struct Methods: Sendable, Equatable {
        /// Email and password (and "forgot password").
        public var password: Bool
        /// Creating an account here.
        public var signUp: Bool
        /// A one-time code by email.
        public var emailCode: Bool
        /// A one-time code by text message.
        public var smsCode: Bool
        /// Enterprise SSO by email domain.
        public var sso: Bool
        /// OAuth providers, one button each, in this order.
        public var providers: [Provider]

        /// The given methods; none unless named.
        public init(password: Bool = false, signUp: Bool = false, emailCode: Bool = false, smsCode: Bool = false,
                    sso: Bool = false, providers: [Provider] = []) {
            self.password = password
            self.signUp = signUp
            self.emailCode = emailCode
            self.smsCode = smsCode
            self.sso = sso
            self.providers = providers
        }
    }

    /// An OAuth provider offered on the first page.
    public struct Provider: Sendable, Equatable {
        /// GoTrue's name for it (`github`), sent back in the form's `provider` field.
        public var id: String
        /// What the button says after "Continue with" (`GitHub`).
        public var name: String

        /// The provider GoTrue calls `id`, shown as `name`.
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// Where a one-time code is sent.
    public enum CodeChannel: Sendable, Equatable {
        /// To an email address.
        case email
        /// By text message to a phone number.
        case sms
    }

    /// The second factor a sign-in must verify.
    public enum SecondFactor: Sendable, Equatable {
        /// A code from an authenticator app.
        case totp
        /// A code texted to a phone; `number` is as the server shows it (often partly hidden).
        case phone(number: String)
    }

    /// How a sign-in ended without a session.
    public enum Ending: Sendable, Equatable {
        /// It failed; the page's error says why, and the user may start again.
        case failed
        /// The page waited too long: the app must start a new sign-in.
        case expired
        /// The user or the app cancelled it.
        case cancelled
    }
}
