import FoundationEssentials

/// The rules of authd's own sign-in page, one flow per visit: which form the page shows, what
/// it offers (as the project's settings enable), what a posted form does, and which GoTrue call
/// the driver makes for it. A value type without I/O or a clock: every input carries `now`,
/// and its answer is a `SignInPageTransition`, with the operation to carry out when there is one.
///
/// The rules:
/// - a flow ends signed in, failed, cancelled, or expired `lifetime` after it began (an
///   operation already handed out is waited for: its outcome still counts);
/// - an action that does not fit the current step, or comes after the end, is refused and
///   changes nothing; a method the settings do not enable is never offered and is refused;
/// - at most one operation is out at a time: a second submit while one is out is refused, and
///   an outcome is taken only with the ticket of the operation out. Until it comes the flow
///   neither expires nor takes a cancel (a sign-in under way may be taking a session), so the
///   driver bounds every call it makes;
/// - no password or code is kept: each goes straight into the operation handed out. The one
///   secret the flow keeps is a new TOTP factor's setup, which the page must show until its
///   first code is verified (`SignInPageStep.enrolTOTP`);
/// - a field that does not pass (`SignInPageInput`) or a refused call shows an inline error
///   and keeps the form, filled with what was typed (never a password or a code);
/// - after a rate limit, calls of the same kind wait, without being sent, for the time the
///   server named (a proxy's `Retry-After`, or GoTrue's "…after 42 seconds").
public struct SignInPageFlow: Sendable, CustomStringConvertible, CustomReflectable {
    /// How long a page visit may take, from its first view to its end.
    public static let lifetime: TimeInterval = 600

    /// What the page was opened for.
    public struct Options: Sendable, Equatable {
        /// The email to fill in at first (the account signing in again), if known.
        public var email: String?
        /// The phone number to fill in at first, if known.
        public var phone: String?
        /// Whether to offer adding a second factor to an account that has none (an app asked
        /// for `aal2`).
        public var offerEnrolment: Bool
        /// The form to show first, when the project offers it (the way the account signed in
        /// before); the page's own first step otherwise, and after "Sign in another way".
        public var method: SignInPageMethod?

        /// Creates options.
        public init(email: String? = nil, phone: String? = nil, offerEnrolment: Bool = false, method: SignInPageMethod? = nil) {
            self.email = email
            self.phone = phone
            self.offerEnrolment = offerEnrolment
            self.method = method
        }
    }

    /// When the visit began.
    public let startedAt: Date
    /// What the page was opened for.
    public let options: Options
    /// The project's settings, once read.
    public internal(set) var settings: ProjectSettings?
    /// What the page shows.
    public internal(set) var step: SignInPageStep = .loading
    /// The error shown inline, if any.
    public internal(set) var error: SignInPageError?
    /// Whether the server asked for a CAPTCHA during this visit: the page then says that it
    /// does not support one.
    public internal(set) var captchaRequired = false
    /// The account signed in so far (before a second factor or a new password), if any.
    public internal(set) var account: SignInPageAccount?

    /// The operation out, if any.
    var outstanding: Outstanding?
    /// The ticket of the next operation.
    var nextTicket: UInt64 = 1
    /// What the user typed last, to fill the forms with.
    var email: String
    var phone = ""
    var domain = ""
    /// The challenge of the factor being verified.
    var challenge: FactorChallenge?
    /// Whether a new password is asked for once signed in (a recovery code signed in).
    var newPasswordDue = false
    /// Calls of a kind the server rate-limited, and until when.
    var rateLimits: [SignInPageCallKind: Date] = [:]
    /// Second factors whose challenge the server rate-limited (an SMS factor's code, at most
    /// one a minute), by id, and until when: another factor is not held back.
    var challengeLimits: [String: Date] = [:]

    /// An operation handed out, with what it was for; nothing secret.
    struct Outstanding: Sendable, Equatable {
        var ticket: UInt64
        var call: Call
    }

    /// What an operation handed out was for.
    enum Call: Sendable, Equatable {
        case settings
        case passwordSignIn
        case verifyCode(SignInPageChannel, address: String, purpose: SignInPageCodePurpose)
        case anonymous
        case signUp(email: String)
        case sendCode(SignInPageChannel, address: String, purpose: SignInPageCodePurpose)
        case startBrowser(SignInPageBrowserTarget)
        case completeBrowser(SignInPageBrowserTarget)
        case challenge(FactorSummary, enrolling: Bool, setup: TOTPSetup?)
        case verifyFactor(FactorSummary, enrolling: Bool, setup: TOTPSetup?)
        case enrol(FactorKind)
        case updatePassword

        /// How a refusal of the call reads, and which rate limit it shares.
        var kind: SignInPageCallKind {
            switch self {
            case .passwordSignIn: return .password
            case .verifyCode: return .code
            case .anonymous, .signUp: return .signUp
            case .sendCode: return .sendCode
            case .startBrowser, .completeBrowser: return .browser
            case .challenge: return .challenge
            case .verifyFactor, .enrol: return .secondFactor
            case .settings, .updatePassword: return .other
            }
        }
    }

    /// A flow beginning at `startedAt`; `start(now:)` hands out the reading of the settings.
    public init(startedAt: Date, options: Options = Options()) {
        self.startedAt = startedAt
        self.options = options
        self.email = options.email ?? ""
        self.phone = options.phone.map { $0.hasPrefix("+") ? $0 : "+" + $0 } ?? ""
    }

    /// A flow beginning at `startedAt` with settings already read: it shows its first form at once.
    public init(startedAt: Date, settings: ProjectSettings, options: Options = Options()) {
        self.init(startedAt: startedAt, options: options)
        adopt(settings)
    }

    /// When the flow expires unless it has ended.
    public var expiresAt: Date { startedAt.addingTimeInterval(Self.lifetime) }

    /// Whether the flow has ended.
    public var hasEnded: Bool {
        if case .finished = step { return true }
        return false
    }

    /// Whether an operation is out.
    public var isBusy: Bool { outstanding != nil }

    /// Hands out the reading of the project's settings: once, while the page is loading.
    public mutating func start(now: Date) -> SignInPageTransition {
        if let refusal = refusal(now: now) { return .refused(refusal) }
        guard step == .loading else { return .refused(.notNow) }
        return handOut(.fetchSettings, for: .settings)
    }

    /// Ends the flow if it has outlived `lifetime` at `now` with no operation out; what the
    /// driver calls before showing the page, or on a timer.
    public mutating func expireIfDue(now: Date) {
        if !hasEnded, outstanding == nil, now >= expiresAt { finish(.expired) }
    }

    /// What the page shows at `now`: the step, the error in words, the methods offered.
    public func view(now: Date) -> SignInPageScreen {
        var flow = self
        flow.expireIfDue(now: now)
        return SignInPageScreen(step: flow.step, error: flow.error, errorMessage: flow.error?.message(now: now),
                              methods: flow.settings.map(SignInPageMethod.offered) ?? [], isBusy: flow.isBusy, account: flow.account,
                              captchaUnsupported: flow.captchaRequired, expiresAt: expiresAt, settings: settings)
    }

    /// The step, the error and whether an operation is out; never a secret.
    public var description: String {
        "SignInPageFlow(step: \(step), error: \(error.map(String.init(describing:)) ?? "none"), busy: \(isBusy))"
    }

    /// Only what `description` shows, so that `dump` shows no secret either.
    public var customMirror: Mirror {
        Mirror(self, children: ["step": step.description, "error": error.map(String.init(describing:)) ?? "none", "busy": isBusy])
    }

    // MARK: Shared by the inputs

    /// Why no input may be taken at `now`, after ending the flow if it expired.
    mutating func refusal(now: Date) -> SignInPageRefusal? {
        expireIfDue(now: now)
        if hasEnded { return .ended }
        if outstanding != nil { return .busy }
        return nil
    }

    /// Hands out `operation`, recording what it is for.
    mutating func handOut(_ operation: SignInPageOperation, for call: Call) -> SignInPageTransition {
        let request = SignInPageRequest(ticket: nextTicket, operation: operation)
        nextTicket += 1
        outstanding = Outstanding(ticket: request.ticket, call: call)
        return .next(request)
    }

    /// Ends the flow; nothing secret stays, and the error shown is the failure's, if any.
    mutating func finish(_ end: SignInPageEnd) {
        step = .finished(end)
        if case .failed(let problem) = end { error = problem } else { error = nil }
        outstanding = nil
        challenge = nil
        newPasswordDue = false
    }

    /// Takes `settings` and shows the first form (the one `options.method` names, when offered);
    /// a project that offers nothing ends the flow.
    mutating func adopt(_ settings: ProjectSettings) {
        self.settings = settings
        if SignInPageMethod.offered(by: settings).isEmpty {
            finish(.failed(.nothingOffered))
        } else if let method = options.method, method.hasForm, offered.contains(method) {
            step = form(of: method)
        } else {
            step = firstStep
        }
    }

    /// The page's first step: the email and password form (the first page, which lists every
    /// other way too); else, when the project offers one form and no button, that form; else
    /// the first page of buttons and links to the other forms, so that none is out of reach.
    var firstStep: SignInPageStep {
        let offered = offered
        if offered.contains(.password) { return .password(email: email) }
        let forms = offered.filter(\.hasForm)
        if forms.count == 1, offered.allSatisfy(\.hasForm) { return form(of: forms[0]) }
        return .methods
    }

    /// The methods offered.
    var offered: [SignInPageMethod] { settings.map(SignInPageMethod.offered) ?? [] }
}

/// What an input to a `SignInPageFlow` did.
public enum SignInPageTransition: Sendable, Equatable {
    /// Nothing changed, for this reason.
    case refused(SignInPageRefusal)
    /// The flow moved on (its `view` says where); carry out the request, if any, and report its
    /// outcome with its ticket.
    case next(SignInPageRequest?)
}

/// Why a `SignInPageFlow` refused an input.
public enum SignInPageRefusal: Sendable, Equatable {
    /// The flow has ended (signed in, failed, cancelled or expired).
    case ended
    /// An operation is out: its outcome comes first.
    case busy
    /// The action does not fit the page's current step.
    case notNow
    /// The project does not enable that method, provider or factor.
    case notOffered
    /// The outcome is not for the operation out (an earlier one's, or none is out).
    case staleOutcome
}
