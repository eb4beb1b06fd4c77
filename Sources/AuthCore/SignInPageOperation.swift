import FoundationEssentials

/// A GoTrue call a sign-in page's flow hands its driver, which carries it out and reports its
/// `SignInPageOutcome`. The passwords and codes in it exist only here: the flow keeps none.
/// The description and the mirror name the call only.
public enum SignInPageOperation: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// `GET /settings`; answers `.settings`.
    case fetchSettings
    /// A sign-in (`/token` password grant, `/verify` code, anonymous `/signup`), taken as the
    /// profile's session as `authctl login` takes one; answers `.signedIn`.
    case signIn(SignInCredential)
    /// `POST /signup`; answers `.signedIn` (auto-confirmed, taken as the session) or
    /// `.confirmationSent`.
    case signUp(SignUpRequest)
    /// `POST /otp` or `POST /recover`; answers `.accepted`.
    case sendCode(CodeRequest)
    /// `POST /resend` of a sign-up's confirmation; answers `.accepted`.
    case resend(ResendRequest)
    /// A PKCE browser sign-in started for the page (the verifier kept by the driver, the
    /// redirect to its loopback listener): answers `.browserURL` with where to send the browser.
    case startBrowserSignIn(SignInPageBrowserTarget)
    /// The browser came back from the sign-in `startBrowserSignIn` began: exchange its code
    /// (or take its error); answers `.signedIn`.
    case completeBrowserSignIn(SignInPageBrowserTarget)
    /// `POST /factors/{id}/challenge` on the page's session (an SMS factor's code is sent now);
    /// answers `.challenged`.
    case challengeFactor(id: String)
    /// `POST /factors/{id}/verify`, raising the page's session to `aal2`; answers `.signedIn`.
    case verifyFactor(id: String, challengeID: String, code: String)
    /// `POST /factors` on the page's session; answers `.enrolled`.
    case enrolFactor(FactorEnrollmentRequest)
    /// `PUT /user` with the new password, on the session a recovery code signed in; answers
    /// `.accepted`.
    case updatePassword(String)

    /// The call's name, never a secret.
    public var description: String {
        switch self {
        case .fetchSettings: return "fetchSettings"
        case .signIn(let credential): return "signIn(\(credential))"
        case .signUp(let request): return "signUp(\(request.address.field))"
        case .sendCode(.signIn(let address, let create)): return "sendCode(signIn, \(address.field), createUser: \(create))"
        case .sendCode(.recovery): return "sendCode(recovery)"
        case .resend(let request): return "resend(\(request.purpose.rawValue))"
        case .startBrowserSignIn(let target): return "startBrowserSignIn(\(target))"
        case .completeBrowserSignIn(let target): return "completeBrowserSignIn(\(target))"
        case .challengeFactor(let id): return "challengeFactor(\(id))"
        case .verifyFactor(let id, _, _): return "verifyFactor(\(id))"
        case .enrolFactor(let request): return "enrolFactor(\(request.kind.rawValue))"
        case .updatePassword: return "updatePassword"
        }
    }

    /// No children: `dump` shows the description only.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// An operation handed out, with the ticket its outcome must come back with: an outcome for
/// another ticket (an operation of an earlier step) is dropped.
public struct SignInPageRequest: Sendable, Equatable, CustomStringConvertible {
    /// Names this operation within its flow.
    public var ticket: UInt64
    /// What to do.
    public var operation: SignInPageOperation

    /// Creates a request.
    public init(ticket: UInt64, operation: SignInPageOperation) {
        self.ticket = ticket
        self.operation = operation
    }

    /// The ticket and the operation's name.
    public var description: String { "#\(ticket) \(operation)" }
}

/// What came of an operation, as the driver reports it.
public enum SignInPageOutcome: Sendable, Equatable {
    /// The project's settings (`fetchSettings`).
    case settings(ProjectSettings)
    /// A session was taken: a sign-in, an auto-confirmed sign-up, a browser sign-in, a verified
    /// second factor.
    case signedIn(SignInPageAccount)
    /// The sign-up needs its address confirmed: a code was sent.
    case confirmationSent
    /// The server did it and answered nothing more: a code sent, a password changed.
    case accepted
    /// Where to send the browser (`startBrowserSignIn`).
    case browserURL(URL)
    /// A challenge of the factor (`challengeFactor`).
    case challenged(FactorChallenge)
    /// The new, unverified factor (`enrolFactor`).
    case enrolled(FactorEnrollment)
    /// The operation failed.
    case failed(SignInPageFailure)
}

/// Why an operation failed.
public enum SignInPageFailure: Error, Sendable, Equatable {
    /// GoTrue refused it, or could not be reached.
    case server(ServerFailure)
    /// The browser came back with an error, or not in time.
    case browser(OAuthFlowFailure)
    /// The session the page signed in was signed out or replaced meanwhile (another sign-in,
    /// a sign-out, the server ending it), so there is nothing left to go on with.
    case sessionEnded
    /// The call was not made, for a reason of authd's own that passes (the session was busy
    /// refreshing): trying again may work.
    case interrupted
}
