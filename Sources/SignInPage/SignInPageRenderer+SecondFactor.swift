/// The second factor's steps: choosing one, its code, and adding one.
extension SignInPageRenderer {
    mutating func writeSecondFactorStep() {
        let actions = view.actions
        switch view.step {
        case .chooseSecondFactor(let factors):
            heading("Two-step verification", "Choose how to confirm it is you.")
            writeErrorIfUnplaced()
            for factor in factors {
                form(actions.chooseFactor, hidden: [(.factor, factor.id)], className: "alt") {
                    $0.secondaryButton(factor.label)
                }
            }
            moreActions([("Cancel sign-in", .post(actions.cancel))])
        case .secondFactor(.totp, let enrolling, let others):
            heading(enrolling ? "Turn on your authenticator app" : "Two-step verification",
                    "Enter the code your authenticator app shows for this account.")
            writeCodeForm(button: enrolling ? "Verify and turn on" : "Verify")
            moreActions(secondFactorActions(enrolling: enrolling, others: others))
        case .secondFactor(.phone(let number), let enrolling, let others):
            heading(enrolling ? "Confirm your phone" : "Two-step verification")
            lead("We texted a code to ", number, ".")
            writeCodeForm(button: enrolling ? "Verify and turn on" : "Verify")
            // A new code is a new challenge of the factor, which the flow makes for a factor
            // signing in; one being added is challenged once, when it is added.
            var more: [(label: String, action: Action)] = enrolling ? [] : [("Text me a new code", .post(actions.resendCode))]
            more += secondFactorActions(enrolling: enrolling, others: others)
            moreActions(more)
        case .offerEnrolment(let phone):
            heading("Protect your account", "Add a second step to signing in, so that a password alone is not enough.")
            writeErrorIfUnplaced()
            form(actions.enroll, hidden: [(.factorType, "totp")], className: "alt") {
                $0.secondaryButton("Use an authenticator app")
            }
            if phone {
                form(actions.go, hidden: [(.to, SignInPageView.Destination.enrollPhone.rawValue)], className: "alt") {
                    $0.secondaryButton("Use text messages")
                }
            }
            moreActions([("Not now", .post(actions.skipEnrolment))])
        case .enrollPhone(let number):
            heading("Add your phone", "We will text a code to it each time you sign in.")
            writeErrorIfUnplaced()
            form(actions.enroll, hidden: [(.factorType, "phone")]) {
                $0.field(.phone, label: "Phone number", .phone, value: number, hint: "With the country code, like +44 7700 900123.")
                $0.primaryButton("Text me a code")
            }
            moreActions([("Cancel", .post(actions.cancel))])
        case .enrollTOTP(let qrImage, let secret):
            writeEnrollTOTP(qrImage: qrImage, secret: secret)
        default:
            break
        }
    }

    /// Under a factor's code: another of the user's factors, when there is one, and the way out.
    private func secondFactorActions(enrolling: Bool, others: Bool) -> [(label: String, action: Action)] {
        var actions: [(label: String, action: Action)] = []
        if others && !enrolling { actions.append(("Use another way", .go(.chooseFactor))) }
        actions.append((enrolling ? "Cancel" : "Cancel sign-in", .post(view.actions.cancel)))
        return actions
    }

    private mutating func writeCodeForm(button: String) {
        writeErrorIfUnplaced()
        form(view.actions.verifyFactor) {
            $0.field(.code, label: "Code", .code)
            $0.primaryButton(button)
        }
    }

    private mutating func writeEnrollTOTP(qrImage: String, secret: String) {
        let source = Self.qrImageSource(qrImage)
        heading("Set up your authenticator app", source != nil
            ? "Scan this QR code with your authenticator app, or type the key into it. Then enter the code it shows."
            : "Type this key into your authenticator app. Then enter the code it shows.")
        if let source {
            html.raw("<div class=\"qr\">")
            html.open("img", [("src", source), ("alt", "QR code for your authenticator app"), ("width", "192"), ("height", "192")])
            html.raw("</div>\n")
        }
        html.raw("<p class=\"secret-label\">Key</p>\n")
        html.element("p", [("class", "secret")], text: secret)
        html.raw("\n")
        writeErrorIfUnplaced()
        form(view.actions.verifyFactor) {
            $0.field(.code, label: "Code from the app", .code)
            $0.primaryButton("Verify and turn on")
        }
        moreActions([("Cancel", .post(view.actions.cancel))])
    }
}
