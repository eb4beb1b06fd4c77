import FoundationEssentials

/// What the driver reports back: the outcome of the operation out.
extension SignInPageFlow {
    /// Takes the outcome of the operation with `ticket` at `now`: the next form, an inline
    /// error, the end, or the next operation (a second factor's challenge follows a sign-in by
    /// itself). An outcome for another ticket, or after the end, is refused and changes nothing.
    /// Past `lifetime`, a flow that has not ended with this outcome expires, and any operation
    /// it would hand out is not.
    public mutating func complete(_ ticket: UInt64, with outcome: SignInPageOutcome, now: Date) -> SignInPageTransition {
        guard !hasEnded else { return .refused(.ended) }
        guard let out = outstanding, out.ticket == ticket else { return .refused(.staleOutcome) }
        outstanding = nil
        let transition = apply(outcome, to: out.call, now: now)
        if !hasEnded, now >= expiresAt {
            finish(.expired)
            return .next(nil)
        }
        return transition
    }

    private mutating func apply(_ outcome: SignInPageOutcome, to call: Call, now: Date) -> SignInPageTransition {
        if case .failed(let failure) = outcome { return failed(failure, call: call, now: now) }
        switch (call, outcome) {
        case (.settings, .settings(let settings)):
            adopt(settings)
            return .next(nil)
        case (.passwordSignIn, .signedIn(let account)), (.anonymous, .signedIn(let account)), (.signUp, .signedIn(let account)),
             (.completeBrowser, .signedIn(let account)), (.verifyFactor, .signedIn(let account)):
            return signedIn(account)
        case (.verifyCode(_, _, let purpose), .signedIn(let account)):
            if purpose == .recovery { newPasswordDue = true }
            return signedIn(account)
        case (.signUp(let email), .confirmationSent):
            error = nil
            step = .enterCode(.email, address: email, purpose: .confirmSignUp)
            return .next(nil)
        case (.sendCode(let channel, let address, let purpose), .accepted):
            error = nil
            step = .enterCode(channel, address: address, purpose: purpose)
            return .next(nil)
        case (.startBrowser(let target), .browserURL(let url)):
            error = nil
            step = .atProvider(target, url: url)
            return .next(nil)
        case (.challenge(let factor, let enrolling, let setup), .challenged(let challenge)):
            self.challenge = challenge
            step = setup.map { .enrolTOTP(factor, setup: $0) } ?? .secondFactorCode(factor, enrolling: enrolling)
            return .next(nil)
        case (.enrol(let kind), .enrolled(let enrollment)):
            let factor = FactorSummary(id: enrollment.id, type: enrollment.type, friendlyName: enrollment.friendlyName)
            if kind == .totp, enrollment.totp == nil { return shown(.serverFailed) }
            return handOut(.challengeFactor(id: factor.id), for: .challenge(factor, enrolling: true, setup: enrollment.totp))
        case (.updatePassword, .accepted):
            newPasswordDue = false
            guard let account else { return shown(.serverFailed) }
            return signedIn(account)
        default:
            // An outcome of another operation's kind: the driver's mistake, shown as a failure.
            if call == .settings { finish(.failed(.serverFailed)) } else { error = .serverFailed }
            return .next(nil)
        }
    }

    /// A session was taken for `account`: a second factor next when the user has one and the
    /// session lacks it, then the new password a recovery asks for, then the offer to add a
    /// second factor, and then the end.
    private mutating func signedIn(_ account: SignInPageAccount) -> SignInPageTransition {
        self.account = account
        error = nil
        challenge = nil
        if account.needsSecondFactor {
            let factors = account.verifiableFactors
            if factors.count == 1 {
                step = .secondFactorCode(factors[0], enrolling: false)
                return handOut(.challengeFactor(id: factors[0].id), for: .challenge(factors[0], enrolling: false, setup: nil))
            }
            if factors.count > 1 {
                step = .chooseSecondFactor(factors)
                return .next(nil)
            }
            // Only factors the page cannot verify (a passkey): signed in as the session is.
        }
        if newPasswordDue {
            step = .newPassword(account)
            return .next(nil)
        }
        if options.offerEnrolment, account.verifiedFactors.isEmpty, account.level < .aal2, !account.isAnonymous {
            step = .offerEnrolment
            return .next(nil)
        }
        finish(.signedIn(account))
        return .next(nil)
    }

    /// The call failed: its error shown on the form it came from, or the flow ended when there
    /// is nothing to go back to.
    private mutating func failed(_ failure: SignInPageFailure, call: Call, now: Date) -> SignInPageTransition {
        let problem = SignInPageError(failure, during: call.kind, now: now)
        switch problem {
        case .rateLimited(let until?), .codeSentRecently(let until?), .cannotSendNow(_, let until?):
            if case .challenge(let factor, _, _) = call { challengeLimits[factor.id] = until } else { rateLimits[call.kind] = until }
        case .captchaRequired: captchaRequired = true
        case .sessionEnded, .secondFactorRejected:
            finish(.failed(problem))
            return .next(nil)
        default: break
        }
        error = problem
        var sentRecently = false
        if case .codeSentRecently = problem { sentRecently = true }
        switch call {
        case .settings:
            finish(.failed(problem))
        case .passwordSignIn where problem == .notConfirmed(.email):
            // The confirmation's code (sent at sign-up) signs in; it can be sent again from there.
            step = .enterCode(.email, address: email, purpose: .confirmSignUp)
        case .sendCode(let channel, let address, let purpose) where sentRecently:
            // The code sent moments ago still works.
            step = .enterCode(channel, address: address, purpose: purpose)
        case .signUp(let email) where sentRecently:
            // The account was made moments ago and its confirmation sent: its code confirms it.
            step = .enterCode(.email, address: email, purpose: .confirmSignUp)
        case .completeBrowser(.provider):
            step = firstStep
        case .completeBrowser(.singleSignOn):
            step = .singleSignOn(domain: domain)
        case .verifyFactor(let factor, let enrolling, let setup) where problem == .secondFactorCodeExpired:
            // A new challenge (for an SMS factor, a new code): the expired one takes no code.
            challenge = nil
            return handOut(.challengeFactor(id: factor.id), for: .challenge(factor, enrolling: enrolling, setup: setup))
        case .challenge(_, enrolling: false, _) where challenge != nil && isShowingSecondFactorCode:
            // A new code (or another factor) asked for from a code's field: the challenge the
            // user has a code for still takes it, so its field stays.
            break
        case .challenge(_, let enrolling, _):
            // Nothing to verify against: back to choosing, whence the user can try again; a
            // code sent moments ago has no field to go in there, so it reads as the wait it is.
            challenge = nil
            if case .codeSentRecently(let until) = problem { error = .rateLimited(retryAt: until) }
            step = enrolling ? .offerEnrolment : .chooseSecondFactor(account?.verifiableFactors ?? [])
        default:
            break // the form stays, filled as it was
        }
        return .next(nil)
    }

    /// Whether the page shows a second factor's code field while signing in.
    private var isShowingSecondFactorCode: Bool {
        if case .secondFactorCode(_, enrolling: false) = step { return true }
        return false
    }
}
