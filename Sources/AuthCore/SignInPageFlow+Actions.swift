import FoundationEssentials

/// The forms the user posts, and the browser coming back.
extension SignInPageFlow {
    /// Takes what the user posted at `now`: shows another form, an inline error, or hands out
    /// the GoTrue call it asks for.
    public mutating func handle(_ action: SignInPageAction, now: Date) -> SignInPageTransition {
        if let refusal = refusal(now: now) { return .refused(refusal) }
        if action == .cancel {
            finish(.cancelled(signedInAs: account))
            return .next(nil)
        }
        guard settings != nil else { return .refused(.notNow) }
        switch action {
        case .choose(let method):
            guard method.hasForm, isChoosing else { return .refused(.notNow) }
            guard offered.contains(method) else { return .refused(.notOffered) }
            error = nil
            step = form(of: method)
            return .next(nil)
        case .chooseAnother:
            guard isChoosing else { return .refused(.notNow) }
            error = nil
            step = firstStep
            return .next(nil)
        case .signInWithPassword(let email, let password):
            guard case .password = step else { return .refused(.notNow) }
            self.email = SignInPageInput.trimmed(email)
            step = .password(email: self.email)
            return submit(Self.both(SignInPageInput.email(email), SignInPageInput.password(password)), kind: .password, now: now) { typed in
                (.signIn(.password(.email(typed.0), password: typed.1)), .passwordSignIn)
            }
        case .requestCode(let address):
            guard case .requestCode(let channel, _) = step else { return .refused(.notNow) }
            return requestCode(channel, address: address, now: now)
        case .submitCode(let code):
            guard case .enterCode(let channel, let address, let purpose) = step else { return .refused(.notNow) }
            return submit(SignInPageInput.code(code), kind: .code, now: now) { code in
                (.signIn(.oneTimeCode(Self.contact(channel, address), code: code, type: Self.otpType(channel, purpose))),
                 .verifyCode(channel, address: address, purpose: purpose))
            }
        case .sendCodeAgain:
            guard case .enterCode(let channel, let address, let purpose) = step else { return .refused(.notNow) }
            return sendCode(channel, address: address, purpose: purpose, now: now)
        case .signUp(let email, let password):
            guard case .signUp = step else { return .refused(.notNow) }
            self.email = SignInPageInput.trimmed(email)
            step = .signUp(email: self.email)
            return submit(Self.both(SignInPageInput.email(email), SignInPageInput.password(password)), kind: .signUp, now: now) { typed in
                (.signUp(SignUpRequest(address: .email(typed.0), password: typed.1)), .signUp(email: typed.0))
            }
        case .forgotPassword(let email):
            guard case .forgotPassword = step else { return .refused(.notNow) }
            self.email = SignInPageInput.trimmed(email)
            step = .forgotPassword(email: self.email)
            switch SignInPageInput.email(email) {
            case .failure(let problem): return shown(problem)
            case .success(let email): return sendCode(.email, address: email, purpose: .recovery, now: now)
            }
        case .setNewPassword(let password):
            guard case .newPassword = step else { return .refused(.notNow) }
            return submit(SignInPageInput.password(password, field: .newPassword), kind: .other, now: now) { password in
                (.updatePassword(password), .updatePassword)
            }
        case .continueWithProvider(let provider):
            guard isChoosing else { return .refused(.notNow) }
            guard offered.contains(.provider(provider)) else { return .refused(.notOffered) }
            return startBrowser(.provider(provider), now: now)
        case .continueWithSingleSignOn(let domain):
            guard case .singleSignOn = step else { return .refused(.notNow) }
            guard offered.contains(.singleSignOn) else { return .refused(.notOffered) }
            self.domain = SignInPageInput.trimmed(domain)
            step = .singleSignOn(domain: self.domain)
            switch SignInPageInput.domain(domain) {
            case .failure(let problem): return shown(problem)
            case .success(let domain): return startBrowser(.singleSignOn(domain: domain), now: now)
            }
        case .signInAnonymously:
            guard isChoosing else { return .refused(.notNow) }
            guard offered.contains(.anonymous) else { return .refused(.notOffered) }
            return waiting(for: .signUp, now: now) ?? userCall(.signIn(.anonymous(metadata: nil)), for: .anonymous)
        case .chooseFactor(let id):
            // From the list, or from a factor's code field ("use another", or "send the code
            // again" for an SMS factor: a new challenge).
            let factors: [FactorSummary]
            switch step {
            case .chooseSecondFactor(let listed): factors = listed
            case .secondFactorCode(_, enrolling: false): factors = account?.verifiableFactors ?? []
            default: return .refused(.notNow)
            }
            guard let factor = factors.first(where: { $0.id == id }) else { return .refused(.notOffered) }
            return challengeHeldBack(factor, now: now) ?? userCall(.challengeFactor(id: factor.id), for: .challenge(factor, enrolling: false, setup: nil))
        case .submitSecondFactorCode(let code):
            let factor: FactorSummary, enrolling: Bool, setup: TOTPSetup?
            switch step {
            case .secondFactorCode(let shown, let isNew): (factor, enrolling, setup) = (shown, isNew, nil)
            case .enrolTOTP(let shown, let shownSetup): (factor, enrolling, setup) = (shown, true, shownSetup)
            default: return .refused(.notNow)
            }
            guard let challenge else { return .refused(.notNow) }
            return submit(SignInPageInput.code(code), kind: .secondFactor, now: now) { code in
                (.verifyFactor(id: factor.id, challengeID: challenge.id, code: code), .verifyFactor(factor, enrolling: enrolling, setup: setup))
            }
        case .addPhoneFactor:
            guard case .offerEnrolment = step else { return .refused(.notNow) }
            error = nil
            step = .enrolPhone(number: phone)
            return .next(nil)
        case .chooseAnotherFactor:
            guard case .secondFactorCode(_, enrolling: false) = step, let factors = account?.verifiableFactors, factors.count > 1 else {
                return .refused(.notNow)
            }
            // The challenge shown goes: choosing a factor challenges it anew.
            error = nil
            challenge = nil
            step = .chooseSecondFactor(factors)
            return .next(nil)
        case .enrol(let kind, let number):
            switch step {
            case .offerEnrolment: break
            case .enrolPhone where kind == .phone: break
            default: return .refused(.notNow)
            }
            var request = FactorEnrollmentRequest(kind: kind, friendlyName: SignInPageFactorName.name(for: kind, at: now))
            if kind == .phone {
                self.phone = SignInPageInput.trimmed(number ?? "")
                switch SignInPageInput.phone(number ?? "") {
                case .failure(let problem):
                    // The number's own page, with what was typed, and the problem under it.
                    step = .enrolPhone(number: self.phone)
                    return shown(problem)
                case .success(let phone): request.phone = phone
                }
            }
            return waiting(for: .secondFactor, now: now) ?? userCall(.enrolFactor(request), for: .enrol(kind))
        case .skipEnrolment:
            guard let account else { return .refused(.notNow) }
            switch step {
            case .offerEnrolment, .enrolPhone: break
            default: return .refused(.notNow)
            }
            finish(.signedIn(account))
            return .next(nil)
        case .cancel:
            return .refused(.notNow) // taken above
        }
    }

    /// The browser came back at `now` from the sign-in this flow sent it to (the driver's
    /// loopback listener matched the redirect to this flow): hands out completing it. Refused
    /// unless the page still waits for it; the driver then drops the redirect's code.
    public mutating func browserReturned(now: Date) -> SignInPageTransition {
        if let refusal = refusal(now: now) { return .refused(refusal) }
        guard case .atProvider(let target, _) = step else { return .refused(.notNow) }
        return handOut(.completeBrowserSignIn(target), for: .completeBrowser(target))
    }

    // MARK: Helpers

    /// Whether the page shows a sign-in method's form (or the buttons), from which another
    /// method may be chosen: not once a session is signed in, nor at the end.
    var isChoosing: Bool {
        switch step {
        case .methods, .password, .requestCode, .enterCode, .signUp, .forgotPassword, .singleSignOn, .atProvider: return true
        case .loading, .newPassword, .chooseSecondFactor, .secondFactorCode, .offerEnrolment, .enrolPhone, .enrolTOTP, .finished: return false
        }
    }

    /// The form of `method`, filled with what was typed before.
    func form(of method: SignInPageMethod) -> SignInPageStep {
        switch method {
        case .password: return .password(email: email)
        case .emailCode: return .requestCode(.email, address: email)
        case .phoneCode: return .requestCode(.phone, address: phone)
        case .signUp: return .signUp(email: email)
        case .forgotPassword: return .forgotPassword(email: email)
        case .singleSignOn: return .singleSignOn(domain: domain)
        case .anonymous, .provider: return step
        }
    }

    /// A sign-in code to `address` by `channel`: the form's field checked, then `POST /otp`.
    private mutating func requestCode(_ channel: SignInPageChannel, address: String, now: Date) -> SignInPageTransition {
        guard offered.contains(channel == .email ? .emailCode : .phoneCode) else { return .refused(.notOffered) }
        let typed = SignInPageInput.trimmed(address)
        if channel == .email { email = typed } else { phone = typed }
        step = .requestCode(channel, address: typed)
        switch channel == .email ? SignInPageInput.email(address) : SignInPageInput.phone(address) {
        case .failure(let problem): return shown(problem)
        case .success(let address): return sendCode(channel, address: address, purpose: .signIn, now: now)
        }
    }

    /// Sends the code of `purpose` to `address` (again): `POST /otp`, `/resend` or `/recover`.
    /// A code signs a new address up only where the project takes new accounts.
    private mutating func sendCode(_ channel: SignInPageChannel, address: String, purpose: SignInPageCodePurpose, now: Date) -> SignInPageTransition {
        if let waiting = waiting(for: .sendCode, now: now) { return waiting }
        let contact = Self.contact(channel, address)
        let operation: SignInPageOperation
        switch purpose {
        case .signIn: operation = .sendCode(.signIn(contact, createUser: settings?.signUpDisabled == false))
        case .confirmSignUp: operation = .resend(ResendRequest(address: contact, purpose: channel == .email ? .signup : .sms))
        case .recovery: operation = .sendCode(.recovery(email: address))
        }
        return userCall(operation, for: .sendCode(channel, address: address, purpose: purpose))
    }

    private mutating func startBrowser(_ target: SignInPageBrowserTarget, now: Date) -> SignInPageTransition {
        waiting(for: .browser, now: now) ?? userCall(.startBrowserSignIn(target), for: .startBrowser(target))
    }

    /// A call the user asked for: the error shown so far goes.
    private mutating func userCall(_ operation: SignInPageOperation, for call: Call) -> SignInPageTransition {
        error = nil
        return handOut(operation, for: call)
    }

    /// Nil when a call of `kind` may go to the server at `now`; else the rate limit shown again.
    private mutating func waiting(for kind: SignInPageCallKind, now: Date) -> SignInPageTransition? {
        guard let until = rateLimits[kind] else { return nil }
        guard now < until else {
            rateLimits[kind] = nil
            return nil
        }
        return shown(kind == .sendCode ? .codeSentRecently(retryAt: until) : .rateLimited(retryAt: until))
    }

    /// Nil when `factor` may be challenged at `now`; else its limit shown again: as a code sent
    /// moments ago where that code's field is on the page, else as the wait.
    private mutating func challengeHeldBack(_ factor: FactorSummary, now: Date) -> SignInPageTransition? {
        guard let until = challengeLimits[factor.id] else { return nil }
        guard now < until else {
            challengeLimits[factor.id] = nil
            return nil
        }
        if case .secondFactorCode(let current, enrolling: false) = step, current.id == factor.id {
            return shown(.codeSentRecently(retryAt: until))
        }
        return shown(.rateLimited(retryAt: until))
    }

    /// Shows `problem` inline; the form stays.
    mutating func shown(_ problem: SignInPageError) -> SignInPageTransition {
        error = problem
        return .next(nil)
    }

    /// The operation `make` builds from the checked fields, handed out unless a rate limit on
    /// calls of `kind` holds it back; or the fields' problem shown.
    private mutating func submit<Value>(_ value: Result<Value, SignInPageError>, kind: SignInPageCallKind, now: Date,
                                        _ make: (Value) -> (SignInPageOperation, Call)) -> SignInPageTransition {
        switch value {
        case .failure(let problem): return shown(problem)
        case .success(let value):
            if let waiting = waiting(for: kind, now: now) { return waiting }
            let (operation, call) = make(value)
            return userCall(operation, for: call)
        }
    }

    /// Both fields, or the first one's problem.
    private static func both<First, Second>(_ first: Result<First, SignInPageError>,
                                            _ second: Result<Second, SignInPageError>) -> Result<(First, Second), SignInPageError> {
        first.flatMap { first in second.map { (first, $0) } }
    }

    /// `address` as GoTrue takes it for `channel`.
    static func contact(_ channel: SignInPageChannel, _ address: String) -> ContactAddress {
        channel == .email ? .email(address) : .phone(address)
    }

    /// How `POST /verify` names a code of `purpose` sent by `channel`.
    static func otpType(_ channel: SignInPageChannel, _ purpose: SignInPageCodePurpose) -> OTPType {
        switch purpose {
        case .signIn: return channel == .email ? .email : .sms
        case .confirmSignUp: return channel == .email ? .signup : .sms
        case .recovery: return .recovery
        }
    }
}
