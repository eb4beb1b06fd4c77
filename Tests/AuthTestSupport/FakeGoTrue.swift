import AuthCore
import Foundation
import Synchronization

/// A `GoTrueAPI` that follows a script: sign-in checks one password, refreshes rotate a counter
/// or fail as told, and every call is counted.
public final class FakeGoTrue: GoTrueAPI, Sendable {
    private struct State {
        var password = "correct horse"
        var lifetime = 3600
        var counter = 0
        var refreshFailures: [ServerFailure] = []
        var refreshCalls = 0
        var signOutCalls: [SignOutScope] = []
        var signOutTokens: [String] = []
        var refreshDelay: Duration = .zero
        var refreshHold: (@Sendable () async -> Void)?
        var serverClock: Result<Date?, ServerFailure> = .success(nil)
        var healthChecks = 0
        var healthDelay: Duration = .zero
        var codesSent: [CodeRequest] = []
        var links: [EmailLink?] = []
        var reauthentications = 0
        var keySet: Result<PublishedKeySet, ServerFailure> = .success(PublishedKeySet(keySet: JSONWebKeySet(keys: []), cacheControl: nil))
        var keySetFetches = 0
        var keySetDelay: Duration = .zero
        var email: String? = "a@example.com"
        /// The user every session belongs to: `user-1`, or `anon-1` after an anonymous sign-in
        /// until an email is given to it.
        var userID = "user-1"
        var anonymous = false
        var verifiedFactors: [FactorSummary] = []
        var user: UserSummary { UserSummary(id: userID, email: email, verifiedFactors: verifiedFactors, isAnonymous: anonymous) }
        var factorCalls: [String] = []
        var verifyDelay: Duration = .zero
        var refreshesDuringVerify = 0
        var verifying = false
        var verifyFailures: [ServerFailure] = []
        /// Refreshes that succeed before `refreshFailures` start (`failRefreshes(after:with:)`).
        var refreshSuccessesBeforeFailures = 0
        var settings: Result<ProjectSettings, ServerFailure> = .success(ProjectSettings(emailEnabled: true, emailAutoconfirm: true))
    }
    private let state = Mutex(State())

    /// Creates a fake whose tokens live `lifetime` seconds.
    public init(lifetime: Int = 3600) { state.withLock { $0.lifetime = lifetime } }

    /// The user the next sessions are of (with `a@example.com`'s password still the one taken).
    public func setUser(id: String, email: String?, verifiedFactors: [FactorSummary] = []) {
        state.withLock { state in
            state.userID = id
            state.email = email
            state.verifiedFactors = verifiedFactors
            state.anonymous = false
        }
    }

    /// The next refreshes fail with these, in order.
    public func failNextRefreshes(_ failures: [ServerFailure]) { state.withLock { $0.refreshFailures = failures } }
    /// Makes each refresh take this long (to let requests pile up).
    public func setRefreshDelay(_ delay: Duration) { state.withLock { $0.refreshDelay = delay } }
    /// Holds each refresh at `hold`, awaited once the call is counted and before it is answered:
    /// the test decides when the server answers (with a `Latch`, whatever the caller's task does).
    public func holdRefreshes(at hold: @escaping @Sendable () async -> Void) { state.withLock { $0.refreshHold = hold } }
    /// What `health()` answers: the server's clock, or a failure.
    public func setServerClock(_ clock: Result<Date?, ServerFailure>) { state.withLock { $0.serverClock = clock } }
    /// Makes each health check take this long (to let calls pile up while one is under way).
    public func setHealthDelay(_ delay: Duration) { state.withLock { $0.healthDelay = delay } }
    /// How many health checks were made.
    public var healthChecks: Int { state.withLock { $0.healthChecks } }
    /// The scripted `health()` answer, after `setHealthDelay`'s delay.
    public func health() async throws(ServerFailure) -> Date? {
        let delay = state.withLock { state in
            state.healthChecks += 1
            return state.healthDelay
        }
        if delay > .zero { try? await Task.sleep(for: delay) }
        return try state.withLock { $0.serverClock }.get()
    }
    /// What `settings()` answers: email sign-in, auto-confirmed, unless set otherwise.
    public func setSettings(_ settings: Result<ProjectSettings, ServerFailure>) { state.withLock { $0.settings = settings } }
    /// The scripted `settings()` answer.
    public func settings() async throws(ServerFailure) -> ProjectSettings {
        try state.withLock { $0.settings }.get()
    }
    /// How many refresh calls were made.
    public var refreshCalls: Int { state.withLock { $0.refreshCalls } }
    /// The scopes of sign-out calls, in order.
    public var signOutCalls: [SignOutScope] { state.withLock { $0.signOutCalls } }

    /// A grant as sign-in or refresh returns it; tokens are `access-N` / `refresh-N`.
    public func grant() -> SessionGrant {
        state.withLock { state in
            state.counter += 1
            return SessionGrant(accessToken: "access-\(state.counter)", refreshToken: "refresh-\(state.counter)",
                                expiresIn: state.lifetime, user: state.user)
        }
    }

    /// Accepts `a@example.com` with the configured password, the one-time code `123456`, the ID
    /// token `good-id-token`, any authorization code with the verifier `good-verifier` and every
    /// anonymous sign-in (user `anon-1`). A refresh token is exchanged as `refresh` scripts it.
    public func signIn(_ credential: SignInCredential, captchaToken: String?) async throws(ServerFailure) -> SessionGrant {
        let accepted: Bool
        switch credential {
        case .anonymous:
            state.withLock { state in
                state.userID = "anon-1"
                state.email = nil
                state.anonymous = true
            }
            return grant()
        case .refreshToken(let token): return try await refresh(refreshToken: token)
        case .password(let address, let password):
            accepted = state.withLock { $0.password == password } && address == .email("a@example.com")
        case .oneTimeCode(_, let code, _): accepted = code == "123456"
        case .tokenHash(let hash, _):
            // A link made for someone else's account, handed over to this user.
            if hash == "other-account-hash" {
                var grant = grant()
                grant.user = UserSummary(id: "user-2", email: "mallory@example.com")
                return grant
            }
            accepted = hash == "good-token-hash"
        case .idToken(_, let idToken, _, _): accepted = idToken == "good-id-token"
        case .authorizationCode(_, let verifier): accepted = verifier == "good-verifier"
        }
        guard accepted else {
            throw .http(status: 400, code: "invalid_credentials", message: "Invalid login credentials", retryAfter: nil)
        }
        return grant()
    }

    /// Signs up and in at once (an auto-confirming project).
    public func signUp(_ request: SignUpRequest, captchaToken: String?) async throws(ServerFailure) -> SignUpOutcome { .signedIn(grant()) }

    /// Records the request, and the link's target.
    public func sendCode(_ request: CodeRequest, captchaToken: String?, link: EmailLink?) async throws(ServerFailure) {
        state.withLock {
            $0.codesSent.append(request)
            $0.links.append(link)
        }
    }

    /// Records the request as a link.
    public func resend(_ request: ResendRequest, captchaToken: String?, link: EmailLink?) async throws(ServerFailure) {
        state.withLock { $0.links.append(link) }
    }

    /// The link targets of the codes sent, in order (nil for a code without a link).
    public var links: [EmailLink?] { state.withLock { $0.links } }

    /// A made-up provider URL carrying the challenge.
    public func identityLinkURL(accessToken: String, provider: String, redirectTo: String, codeChallenge: String,
                                scopes: String?) async throws(ServerFailure) -> URL {
        URL(string: "https://example.test/link?provider=\(provider)&code_challenge=\(codeChallenge)")!
    }

    /// Accepts any identity.
    public func unlinkIdentity(accessToken: String, identityID: String) async throws(ServerFailure) {}

    /// A made-up identity provider URL; the domain `unknown.example` is not registered.
    public func singleSignOnURL(_ target: SingleSignOnTarget, redirectTo: String, codeChallenge: String) async throws(ServerFailure) -> URL {
        if target == .domain("unknown.example") {
            throw .http(status: 404, code: "sso_provider_not_found", message: "No SSO provider assigned for this domain", retryAfter: nil)
        }
        return URL(string: "https://idp.example.test/saml?code_challenge=\(codeChallenge)")!
    }

    /// The codes asked for, in order.
    public var codesSent: [CodeRequest] { state.withLock { $0.codesSent } }

    /// The user behind every token.
    public func user(accessToken: String) async throws(ServerFailure) -> UserRecord {
        let user = state.withLock { $0.user }
        return UserRecord(summary: user, json: Data(#"{"id":"\#(user.id)"}"#.utf8))
    }

    /// Applies an email change at once (as a project that confirms automatically does), which
    /// makes an anonymous user a permanent one.
    public func updateUser(accessToken: String, _ changes: UserChanges) async throws(ServerFailure) -> UserRecord {
        if let email = changes.email {
            state.withLock { state in
                state.email = email
                state.anonymous = false
            }
        }
        return try await user(accessToken: accessToken)
    }

    /// The published keys: none (an HS256 project), or what a test set.
    public func keySet() async throws(ServerFailure) -> PublishedKeySet {
        let delay = state.withLock { state in
            state.keySetFetches += 1
            return state.keySetDelay
        }
        if delay > .zero { try? await Task.sleep(for: delay) }
        return try state.withLock { $0.keySet }.get()
    }

    /// Makes `keySet()` answer only after `delay`.
    public func setKeySetDelay(_ delay: Duration) { state.withLock { $0.keySetDelay = delay } }

    /// Makes `keySet()` answer `answer`.
    public func setKeySet(_ answer: Result<PublishedKeySet, ServerFailure>) { state.withLock { $0.keySet = answer } }

    /// Makes `keySet()` publish `keys`, with `cacheControl` as the header.
    public func publish(_ keys: [JSONWebKey], cacheControl: String? = nil) {
        setKeySet(.success(PublishedKeySet(keySet: JSONWebKeySet(keys: keys), cacheControl: cacheControl)))
    }

    /// How many times `keySet()` was called.
    public var keySetFetches: Int { state.withLock { $0.keySetFetches } }

    /// Records that a code was asked for.
    public func reauthenticate(accessToken: String) async throws(ServerFailure) {
        state.withLock { $0.reauthentications += 1 }
    }

    /// How many times `reauthenticate` was called.
    public var reauthentications: Int { state.withLock { $0.reauthentications } }

    /// A fixed URL with the challenge in it.
    public func authorizeURL(provider: String, redirectTo: String, codeChallenge: String, scopes: String?) -> URL {
        URL(string: "https://example.invalid/authorize?provider=\(provider)&code_challenge=\(codeChallenge)")!
    }

    /// Lets `successes` more refreshes succeed, then fails the next ones with `failures`, in
    /// order (a take-over's second exchange, after its first).
    public func failRefreshes(after successes: Int, with failures: [ServerFailure]) {
        state.withLock { state in
            state.refreshSuccessesBeforeFailures = successes
            state.refreshFailures = failures
        }
    }

    /// Rotates, or fails with the next scripted failure.
    public func refresh(refreshToken: String) async throws(ServerFailure) -> SessionGrant {
        let (failure, delay, hold) = state.withLock { state -> (ServerFailure?, Duration, (@Sendable () async -> Void)?) in
            state.refreshCalls += 1
            if state.verifying { state.refreshesDuringVerify += 1 }
            if state.refreshSuccessesBeforeFailures > 0 {
                state.refreshSuccessesBeforeFailures -= 1
                return (nil, state.refreshDelay, state.refreshHold)
            }
            return (state.refreshFailures.isEmpty ? nil : state.refreshFailures.removeFirst(), state.refreshDelay, state.refreshHold)
        }
        if let hold { await hold() }
        if delay > .zero { try? await Task.sleep(for: delay) }
        if let failure { throw failure }
        return grant()
    }

    /// Records the scope and the token.
    public func signOut(accessToken: String, scope: SignOutScope) async throws(ServerFailure) {
        state.withLock {
            $0.signOutCalls.append(scope)
            $0.signOutTokens.append(accessToken)
        }
    }

    /// The access tokens of sign-out calls, in order.
    public var signOutTokens: [String] { state.withLock { $0.signOutTokens } }

    /// The factor every enrollment makes, and the challenge every challenge makes.
    public static let factorID = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0", challengeID = "c0ffee00-1111-4222-8333-444455556666"
    /// The one code `verifyFactor` accepts.
    public static let factorCode = "654321"

    /// Enrolls `FakeGoTrue.factorID`; a TOTP factor comes with a fixed secret.
    public func enrollFactor(accessToken: String, _ request: FactorEnrollmentRequest) async throws(ServerFailure) -> FactorEnrollment {
        state.withLock { $0.factorCalls.append("enroll \(request.kind.rawValue)") }
        let secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
        let totp = request.kind == .totp ? TOTPSetup(uri: "otpauth://totp/dev:a@example.com?secret=\(secret)&issuer=dev", secret: secret) : nil
        return FactorEnrollment(id: Self.factorID, type: request.kind.rawValue, friendlyName: request.friendlyName, totp: totp, phone: request.phone)
    }

    /// A TOTP challenge of `FakeGoTrue.factorID`; any other factor is unknown.
    public func challengeFactor(accessToken: String, factorID: String, channel: String?) async throws(ServerFailure) -> FactorChallenge {
        state.withLock { $0.factorCalls.append("challenge") }
        guard factorID == Self.factorID else { throw .http(status: 404, code: "mfa_factor_not_found", message: "Factor not found", retryAfter: nil) }
        return FactorChallenge(id: Self.challengeID, type: "totp", expiresAt: nil)
    }

    /// A new grant for `FakeGoTrue.factorCode`, after `setVerifyDelay`'s delay; counts refreshes
    /// that arrive meanwhile (`refreshesDuringVerify`).
    public func verifyFactor(accessToken: String, factorID: String, challengeID: String, code: String) async throws(ServerFailure) -> SessionGrant {
        let (delay, failure) = state.withLock { state in
            state.factorCalls.append("verify")
            state.verifying = true
            return (state.verifyDelay, state.verifyFailures.isEmpty ? nil : state.verifyFailures.removeFirst())
        }
        if delay > .zero { try? await Task.sleep(for: delay) }
        state.withLock { $0.verifying = false }
        if let failure { throw failure }
        guard code == Self.factorCode else {
            throw .http(status: 422, code: "mfa_verification_failed", message: "Invalid TOTP code entered", retryAfter: nil)
        }
        return grant()
    }

    /// Records the removal.
    public func unenrollFactor(accessToken: String, factorID: String) async throws(ServerFailure) {
        state.withLock { $0.factorCalls.append("unenroll") }
    }

    /// The factor calls made, in order (`enroll totp`, `challenge`, `verify`, `unenroll`).
    public var factorCalls: [String] { state.withLock { $0.factorCalls } }
    /// Makes `verifyFactor` answer only after `delay`.
    public func setVerifyDelay(_ delay: Duration) { state.withLock { $0.verifyDelay = delay } }
    /// The next verifications fail with these, in order.
    public func failNextVerifies(_ failures: [ServerFailure]) { state.withLock { $0.verifyFailures = failures } }
    /// Whether a verification is out now.
    public var isVerifying: Bool { state.withLock { $0.verifying } }
    /// How many refreshes arrived while a verification was out.
    public var refreshesDuringVerify: Int { state.withLock { $0.refreshesDuringVerify } }
}
