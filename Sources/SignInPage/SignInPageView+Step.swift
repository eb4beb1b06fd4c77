extension SignInPageView {
    /// What a sign-in page asks or says: one question per page.
    ///
    /// Pre-filled values are the non-secret ones the user typed before (an email, a phone number, a
    /// domain), so that going back or retrying does not make them type it again.
    public enum Step: Sendable, Equatable {
        /// Waiting for something (the project's settings, another tab's answer): the page
        /// reloads itself every two seconds (`<meta http-equiv="refresh">`, no script).
        case waiting(message: String)
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
        /// The recovery code sent to `email` alone, when the new password is asked next.
        case recoveryCode(email: String)
        /// A new password for the account signed in with a recovery code.
        case newPassword(email: String)
        /// Which of the user's second factors to use, one button each.
        case chooseSecondFactor([Factor])
        /// A second factor's code, to complete the sign-in, or, while `enrolling`, to turn on a
        /// factor just added. With `others`, the user has more factors, and may go back to them.
        case secondFactor(SecondFactor, enrolling: Bool = false, others: Bool = false)
        /// An offer to add a second factor: an authenticator app, or a phone (`phone`: offered).
        case offerEnrolment(phone: Bool)
        /// The phone number a new SMS factor sends its codes to.
        case enrollPhone(number: String = "")
        /// Turning on an authenticator app: the server's QR image, the secret for typing in by hand,
        /// and a field for the first code. `qrImage` is shown when it is GoTrue's SVG document
        /// (`<?xml …` or `<svg …`, as `qr_code` comes) or a `data:image/svg+xml` URI; anything else
        /// is ignored.
        case enrollTOTP(qrImage: String, secret: String)
        /// On the way to another site (an OAuth provider, an SSO identity provider): a page that
        /// moves on by itself (`<meta http-equiv="refresh">`) and has a link to do so. The server answers
        /// a provider's or SSO's form with this page rather than a redirect, because `form-action 'self'`
        /// also stops a form's redirect to another origin. Only an `https:` URL (or `http:` to a
        /// loopback address) is followed.
        case leaving(to: String, name: String)
        /// Done: "Signed in as `who`; you can close this tab".
        case signedIn(who: String)
        /// The sign-in is over without the session it was for.
        case ended(Ending)
    }

    /// The ways a project offers to sign in, as its settings say.
    public struct Methods: Sendable, Equatable {
        /// Email and password.
        public var password: Bool
        /// A recovery code by email, then a new password ("Forgot password?").
        public var forgotPassword: Bool
        /// A new anonymous user ("Continue without an account").
        public var anonymous: Bool
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
        public init(password: Bool = false, forgotPassword: Bool = false, signUp: Bool = false, emailCode: Bool = false,
                    smsCode: Bool = false, sso: Bool = false, anonymous: Bool = false, providers: [Provider] = []) {
            self.password = password
            self.forgotPassword = forgotPassword
            self.anonymous = anonymous
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

    /// One of the user's second factors, to choose from.
    public struct Factor: Sendable, Equatable {
        /// GoTrue's id of the factor, sent back in the form's `factor` field.
        public var id: String
        /// What its button says ("Authenticator app", "Phone ending in 123").
        public var label: String

        /// The factor `id`, shown as `label`.
        public init(id: String, label: String) {
            self.id = id
            self.label = label
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
        /// It was stopped after a session was taken, before its last step (a second factor, a new
        /// password): the user is signed in as `who` all the same, and nothing is undone.
        case stoppedSignedIn(who: String)
    }
}
