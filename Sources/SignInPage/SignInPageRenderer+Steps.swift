/// Each step's card: a heading, at most one question, and the other ways on.
extension SignInPageRenderer {
    mutating func writeStep() {
        let actions = view.actions
        switch view.step {
        case .waiting(let message):
            heading("One moment", message)
            writeErrorIfUnplaced()
        case .choose(let methods, let email):
            writeChoose(methods, email: email)
        case .signUp(let email):
            heading("Create an account")
            writeErrorIfUnplaced()
            form(actions.signUp) {
                $0.field(.email, label: "Email", .signInEmail, value: email)
                $0.field(.newPassword, label: "Password", .newPassword)
                $0.primaryButton("Create account")
            }
            moreActions([("I already have an account", .go(.choose))])
        case .checkInbox(let email):
            heading("Check your inbox")
            lead("We sent a confirmation to ", email, ". Enter the code from that email.")
            writeErrorIfUnplaced()
            form(actions.verifyCode) {
                $0.field(.code, label: "Confirmation code", .code)
                $0.primaryButton("Confirm")
            }
            moreActions([("Send the email again", .post(actions.resendCode)), ("Use another email", .go(.signUp))])
        case .requestCode(.email, let destination):
            heading("Sign in with a code", "We will email you a code to sign in with. No password needed.")
            writeErrorIfUnplaced()
            form(actions.requestCode) {
                $0.field(.email, label: "Email", .email, value: destination)
                $0.primaryButton("Email me a code")
            }
            moreActions([("Sign in another way", .go(.choose))])
        case .requestCode(.sms, let destination):
            heading("Sign in with a text message", "We will text a code to your phone.")
            writeErrorIfUnplaced()
            form(actions.requestCode) {
                $0.field(.phone, label: "Phone number", .phone, value: destination,
                         hint: "With the country code, like +44 7700 900123.")
                $0.primaryButton("Text me a code")
            }
            moreActions([("Sign in another way", .go(.choose))])
        case .enterCode(let channel, let destination):
            heading("Enter your code")
            lead(channel == .email ? "We emailed a code to " : "We texted a code to ", destination, ".")
            writeErrorIfUnplaced()
            form(actions.verifyCode) {
                $0.field(.code, label: "Code", .code)
                $0.primaryButton("Sign in")
            }
            moreActions([("Send a new code", .post(actions.resendCode)),
                         ("Sign in another way", .go(.choose))])
        case .recoveryCode(let email):
            heading("Reset your password")
            lead("We emailed a code to ", email, ".")
            writeErrorIfUnplaced()
            form(actions.verifyCode) {
                $0.field(.code, label: "Code", .code)
                $0.primaryButton("Continue")
            }
            moreActions([("Send a new code", .post(actions.resendCode)), ("Back to sign in", .go(.choose))])
        case .newPassword(let email):
            heading("Choose a new password")
            if !email.isEmpty { lead("For ", email, ".") }
            writeErrorIfUnplaced()
            form(actions.resetPassword) {
                $0.usernameForPasswordManagers(email)
                $0.field(.newPassword, label: "New password", .newPassword)
                $0.primaryButton("Set password")
            }
            moreActions([("Cancel", .post(actions.cancel))])
        case .ssoDomain(let domain):
            heading("Sign in with SSO", "Your organisation's sign-in page will open next.")
            writeErrorIfUnplaced()
            form(actions.sso) {
                $0.field(.domain, label: "Your work email's domain", .domain, value: domain,
                         hint: "The part after the @, like example.com.")
                $0.primaryButton("Continue")
            }
            moreActions([("Sign in another way", .go(.choose))])
        case .forgotPassword(let email):
            heading("Reset your password", "Enter your account's email and we will send you a code to set a new password.")
            writeErrorIfUnplaced()
            form(actions.forgotPassword) {
                $0.field(.email, label: "Email", .email, value: email)
                $0.primaryButton("Send me a code")
            }
            moreActions([("Back to sign in", .go(.choose))])
        case .chooseSecondFactor, .secondFactor, .offerEnrolment, .enrollPhone, .enrollTOTP:
            writeSecondFactorStep()
        case .leaving(let destination, let name):
            writeLeaving(destination, name: name)
        case .signedIn(let who):
            html.raw(Self.doneMark)
            heading("You are signed in")
            lead("Signed in as ", who, ". You can close this tab and go back to your app.")
            writeErrorIfUnplaced()
        case .ended(.failed):
            heading("Sign-in did not finish")
            writeErrorIfUnplaced()
            form(actions.go, hidden: [(.to, SignInPageView.Destination.choose.rawValue)]) {
                $0.primaryButton("Start again")
            }
        case .ended(.expired):
            heading("This page has expired", "Sign-in pages last a few minutes. Start again from your app; you can close this tab.")
            writeErrorIfUnplaced()
        case .ended(.cancelled):
            heading("Sign-in cancelled", "Nothing was changed. You can close this tab.")
            writeErrorIfUnplaced()
        case .ended(.stoppedSignedIn(let who)):
            heading("Sign-in stopped")
            lead("You are signed in as ", who, ", without the last step. Your app can ask for it again; you can close this tab.")
            writeErrorIfUnplaced()
        }
    }

    /// The first page: email and password (or an emailed code), then the providers and SSO, then
    /// the other ways, and last a way to cancel.
    private mutating func writeChoose(_ methods: SignInPageView.Methods, email: String) {
        let actions = view.actions
        heading("Sign in")
        writeErrorIfUnplaced()
        if methods.password {
            form(actions.signIn) {
                $0.field(.email, label: "Email", .signInEmail, value: email)
                $0.field(.password, label: "Password", .currentPassword)
                $0.primaryButton("Sign in")
            }
        } else if methods.emailCode {
            form(actions.requestCode) {
                $0.field(.email, label: "Email", .email, value: email)
                $0.primaryButton("Email me a code")
            }
        }
        let hasFirstForm = methods.password || methods.emailCode
        if hasFirstForm && (methods.sso || methods.anonymous || !methods.providers.isEmpty) {
            html.raw("<p class=\"or\"><span>or</span></p>\n")
        }
        for provider in methods.providers {
            form(actions.provider, hidden: [(.provider, provider.id)], className: "alt") {
                $0.secondaryButton("Continue with " + provider.name)
            }
        }
        if methods.sso {
            form(actions.go, hidden: [(.to, SignInPageView.Destination.sso.rawValue)], className: "alt") {
                $0.secondaryButton("Continue with SSO")
            }
        }
        if methods.anonymous {
            form(actions.anonymous, className: "alt") { $0.secondaryButton("Continue without an account") }
        }
        if !hasFirstForm && !methods.sso && !methods.anonymous && methods.providers.isEmpty && !methods.smsCode && !methods.signUp {
            html.element("p", [("class", "lead")], text: "This project offers no way to sign in here. Ask its owner.")
        }
        var more: [(label: String, action: Action)] = []
        if methods.forgotPassword { more.append(("Forgot password?", .go(.forgotPassword))) }
        if methods.password && methods.emailCode { more.append(("Email me a code instead", .go(.emailCode))) }
        if methods.smsCode { more.append(("Text me a code", .go(.smsCode))) }
        if methods.signUp { more.append(("Create an account", .go(.signUp))) }
        // Saying no is an answer too: the app that opened the page learns it at once, rather than
        // when the page expires.
        more.append(("Cancel sign-in", .post(actions.cancel)))
        moreActions(more)
    }

    private mutating func writeLeaving(_ destination: String, name: String) {
        guard let url = Self.followable(destination) else {
            heading("This sign-in cannot continue", "The address to go on to is not one authd opens. Start again from your app.")
            writeErrorIfUnplaced()
            return
        }
        heading("Continuing to " + name, "If nothing happens in a moment, use the button.")
        writeErrorIfUnplaced()
        html.element("a", [("class", "button primary"), ("href", url)], text: "Continue to " + name)
        html.raw("\n")
    }

    /// A check mark in a circle, drawn inline (no image to load); hidden from screen readers,
    /// which read the heading.
    static let doneMark = "<svg class=\"done\" viewBox=\"0 0 48 48\" width=\"48\" height=\"48\" aria-hidden=\"true\" focusable=\"false\">"
        + "<circle cx=\"24\" cy=\"24\" r=\"22\"></circle><path d=\"M14 25l7 7 13-15\"></path></svg>\n"
}
