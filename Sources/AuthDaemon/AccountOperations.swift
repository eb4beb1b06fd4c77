import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps
import Logging

/// One profile's calls to the server on the user's behalf: sign-in and sign-up (whose session
/// goes to the `SessionDriver` to adopt), one-time codes, the user's record, and the server
/// check. Holds no session state: every token it presents is asked of the driver.
public struct AccountOperations: Sendable {
    let session: SessionDriver
    let api: any GoTrueAPI
    private let server: String
    private let clock: any WallClock
    let logger: Logger

    /// Creates the operations of the profile `session` serves, logging with `logger` (which names
    /// the profile: `ProfileServices` hands over the session's).
    public init(session: SessionDriver, api: any GoTrueAPI, server: String, clock: any WallClock, logger: Logger) {
        self.session = session
        self.api = api
        self.server = server
        self.clock = clock
        self.logger = logger
    }

    /// Signs in with `credential`; returns once the new session is in the keyring (or in memory,
    /// if the keyring refused it), with its user. Subscribers are told `event` (`SIGNED_IN`, or
    /// `PASSWORD_RECOVERY` for a recovery code). A refused sign-in leaves the current session alone.
    /// `captchaToken` is passed on for a project that protects password sign-in with a CAPTCHA.
    /// With `expected`, a session of another account is not adopted but ended at the server,
    /// and the sign-in fails as `anotherAccount`.
    public func signIn(_ credential: SignInCredential, captchaToken: String? = nil,
                       announcing event: SessionEvent = .signedIn, expecting expected: ExpectedAccount? = nil) async -> Result<UserSummary, SignInFailure> {
        let grant: SessionGrant
        do {
            grant = try await api.signIn(credential, captchaToken: captchaToken)
        } catch {
            logger.info("sign-in refused", metadata: ["sign_in.method": "\(credential)", "error": "\(error.readableDescription)"])
            return .failure(.server(error))
        }
        if let expected, await !isExpected(grant.user, expected) {
            logger.notice("an emailed link signed in another account than it was sent to; refused", metadata: ["sign_in.method": "\(credential)"])
            try? await api.signOut(accessToken: grant.accessToken, scope: .local)
            return .failure(.flow(.anotherAccount))
        }
        return await session.adopt(grant, announcing: event).map { grant.user }.mapError { .replaced($0) }
    }

    /// Whether `user` is the account a sign-in was meant for.
    private func isExpected(_ user: UserSummary, _ expected: ExpectedAccount) async -> Bool {
        switch expected {
        case .email(let email): return user.email?.lowercased() == email.lowercased()
        case .signedInUser: return await session.status().user?.id == user.id
        }
    }

    /// Creates an account. When the project confirms automatically the new session is adopted
    /// as by a sign-in; otherwise nothing changes here until the emailed code is verified.
    public func signUp(_ request: SignUpRequest, captchaToken: String? = nil) async -> Result<SignUpOutcome, SignInFailure> {
        let outcome: SignUpOutcome
        do { outcome = try await api.signUp(request, captchaToken: captchaToken) } catch {
            logger.info("sign-up refused", metadata: ["error": "\(error.readableDescription)"])
            return .failure(.server(error))
        }
        guard case .signedIn(let grant) = outcome else {
            logger.info("sign-up needs confirmation")
            return .success(outcome)
        }
        return await session.adopt(grant, announcing: .signedIn).map { outcome }.mapError { .replaced($0) }
    }

    /// Asks the server to send a one-time code. Holds no state: the code comes back through `signIn`.
    public func sendCode(_ request: CodeRequest, captchaToken: String? = nil, link: EmailLink? = nil) async -> Result<Void, ServerFailure> {
        do {
            try await api.sendCode(request, captchaToken: captchaToken, link: link)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Has the server send a confirmation again. Holds no state, like `sendCode`.
    public func resend(_ request: ResendRequest, captchaToken: String? = nil, link: EmailLink? = nil) async -> Result<Void, ServerFailure> {
        do {
            try await api.resend(request, captchaToken: captchaToken, link: link)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// Removes an identity from the user, then reads the user again for the summary kept with
    /// the session (the email may have changed with it) and refreshes, because the token's
    /// `app_metadata.providers` still lists the identity.
    public func unlinkIdentity(_ identityID: String) async -> Result<Void, AccountFailure> {
        let removed = await withServerCallToken { token throws(ServerFailure) in try await api.unlinkIdentity(accessToken: token, identityID: identityID) }
        guard case .success = removed else { return removed }
        logger.info("identity unlinked", metadata: ["identity.id": "\(identityID)"])
        // The identity is gone whatever the session does meanwhile: its answer changes nothing here.
        if case .success(let record) = await user() { _ = await session.userUpdated(record.summary) }
        await session.refreshNow()
        return removed
    }

    /// The signed-in user as the server describes it.
    public func user() async -> Result<UserRecord, AccountFailure> {
        await withServerCallToken { token throws(ServerFailure) in try await api.user(accessToken: token) }
    }

    /// Changes the signed-in user; the summary kept with the session follows and subscribers
    /// are told `USER_UPDATED`. Returns once the session serves a token that states the change
    /// (`SessionDriver.userUpdated`: a refresh first, for an anonymous user given an email);
    /// when none can be had, the change is made all the same and the failure says so. With
    /// `user`, only that user's session is changed (`withServerCallToken`).
    public func updateUser(_ changes: UserChanges, ofUser user: String? = nil) async -> Result<UserRecord, AccountFailure> {
        let result = await withServerCallToken(ofUser: user) { token throws(ServerFailure) in try await api.updateUser(accessToken: token, changes) }
        guard case .success(let record) = result else { return result }
        logger.info("user updated", metadata: ["user.changed": "\(changes)"])
        if case .failure(let failure) = await session.userUpdated(record.summary) {
            logger.notice("user updated, but no token that states the change yet", metadata: ["error": "\(failure)"])
            return .failure(.changedWithoutNewToken(failure))
        }
        return result
    }

    /// Has the server send the signed-in user the code a password change needs on a project that
    /// asks for one (`GET /reauthenticate`).
    public func reauthenticate() async -> Result<Void, AccountFailure> {
        let result = await withServerCallToken { token throws(ServerFailure) in try await api.reauthenticate(accessToken: token) }
        if case .success = result { logger.info("reauthentication code requested") }
        return result
    }

    /// Asks the server's health endpoint whether it answers, and compares its clock with ours.
    public func checkServer() async -> Methods.CheckServer.Result {
        let sent = clock.now()
        do {
            let serverTime = try await api.health()
            // The Date header has whole seconds: compare it with the middle of the round trip.
            let middle = sent.addingTimeInterval(clock.now().timeIntervalSince(sent) / 2)
            return .init(server: server, reachable: true, clockSkew: serverTime.map { (middle.timeIntervalSince($0) * 10).rounded() / 10 })
        } catch {
            return .init(server: server, reachable: false, detail: error.readableDescription)
        }
    }

    /// Runs `call` with an access token valid for `ServerCallToken.minimumValidity` more; with
    /// `user`, only with a token of that user's session (a sign-in page's calls on the session
    /// it signed in), else it fails as `notSignedIn(.replaced)`.
    func withServerCallToken<T: Sendable>(ofUser user: String? = nil,
                                          _ call: @Sendable (String) async throws(ServerFailure) -> T) async -> Result<T, AccountFailure> {
        let answer: Result<IssuedToken, TokenFailure>
        if let user {
            answer = await session.token(validFor: ServerCallToken.minimumValidity, ofUser: user)
        } else {
            answer = await session.token(validFor: ServerCallToken.minimumValidity)
        }
        switch answer {
        case .failure(let failure): return .failure(.session(failure))
        case .success(let token):
            do { return .success(try await call(token.accessToken)) } catch { return .failure(.server(error)) }
        }
    }
}

/// Why a sign-in did not produce a session.
/// The account a sign-in must bring, when a link could have been made for another.
public enum ExpectedAccount: Sendable, Equatable {
    /// The account with this email address (where the link was sent).
    case email(String)
    /// The user signed in now (an email change's link, which keeps the user).
    case signedInUser
}

public enum SignInFailure: Error, Sendable {
    /// GoTrue refused or could not be reached.
    case server(ServerFailure)
    /// Another sign-in or a sign-out overtook this one.
    case replaced(TokenFailure)
    /// A browser sign-in's redirect did not match a flow, or carried the provider's error.
    case flow(OAuthFlowFailure)
}

/// Why a call on the signed-in user's behalf failed.
public enum AccountFailure: Error, Sendable {
    /// There is no usable session (signed out, or the token could not be refreshed).
    case session(TokenFailure)
    /// The server refused or could not be reached.
    case server(ServerFailure)
    /// An MFA verification got no answer it could read, twice (`failure` is the last): the server
    /// may have raised the session and moved its refresh token on. Refreshes are held back until
    /// a new verification, or shortly before the token expires.
    case verificationUncertain(ServerFailure)
    /// The session kept changing (refresh after refresh) while a verification waited its turn.
    case sessionBusy
    /// The server made the change, but no token that states it could be had (`failure`):
    /// refreshing fails for now (the held token is served meanwhile, and retried as usual), or
    /// the session ended or was replaced while the change was out.
    case changedWithoutNewToken(TokenFailure)
}
