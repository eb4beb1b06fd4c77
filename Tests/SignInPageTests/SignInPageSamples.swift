import SignInPage

/// One view of every step (and a few variants with errors), named, for the structure tests and
/// for the previews that are screenshotted (`SignInPagePreviewWriter`).
enum SignInPageSamples {
    static let project = SignInPageView.Project(name: "Acme Notes", host: "abcdefghijklmnop.supabase.co")
    static let csrf = "c5rf-t0ken-for-this-page"
    /// GoTrue's QR image as the server sends it: an SVG document (`qr_code` of `POST /factors`).
    static let qrImage = QRSample.svg

    static let allMethods = SignInPageView.Methods(password: true, forgotPassword: true, signUp: true, emailCode: true,
                                                   smsCode: true, sso: true, anonymous: true,
                                          providers: [SignInPageView.Provider(id: "github", name: "GitHub"),
                                                      SignInPageView.Provider(id: "google", name: "Google")])

    static func view(_ step: SignInPageView.Step, error: SignInPageView.Problem? = nil) -> SignInPageView {
        SignInPageView(project: project, step: step, error: error, csrfToken: csrf)
    }

    /// Every step, by a file-friendly name.
    static let all: [(name: String, view: SignInPageView)] = [
        ("01-choose", view(.choose(allMethods))),
        ("02-choose-wrong-password", view(.choose(allMethods, email: "ada@example.com"),
                                          error: SignInPageView.Problem("That email and password do not match an account. Check them, or reset your password."))),
        ("03-choose-password-only", view(.choose(SignInPageView.Methods(password: true, forgotPassword: true)))),
        ("04-choose-code-and-providers", view(.choose(SignInPageView.Methods(emailCode: true, providers: [SignInPageView.Provider(id: "github", name: "GitHub")])))),
        ("05-sign-up", view(.signUp(email: "ada@example.com"),
                            error: SignInPageView.Problem("Use at least 8 characters.", field: .newPassword))),
        ("06-check-inbox", view(.checkInbox(email: "ada@example.com"))),
        ("07-request-code-email", view(.requestCode(.email))),
        ("08-request-code-sms", view(.requestCode(.sms, destination: "+44"))),
        ("09-enter-code", view(.enterCode(.email, destination: "ada@example.com"),
                               error: SignInPageView.Problem("That code is not right, or it has expired. Try again or send a new one.", field: .code))),
        ("10-enter-code-sms", view(.enterCode(.sms, destination: "+44 •••• ••• 123"))),
        ("11-sso", view(.ssoDomain())),
        ("12-forgot-password", view(.forgotPassword(email: "ada@example.com"))),
        ("14-second-factor-totp", view(.secondFactor(.totp))),
        ("15-second-factor-phone", view(.secondFactor(.phone(number: "+44 •••• ••• 123")))),
        ("16-enroll-totp", view(.enrollTOTP(qrImage: qrImage, secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"))),
        ("17-enroll-totp-no-image", view(.enrollTOTP(qrImage: "https://example.com/qr.png", secret: "JBSWY3DPEHPK3PXP"))),
        ("18-leaving", view(.leaving(to: "https://abcdefghijklmnop.supabase.co/auth/v1/authorize?provider=github", name: "GitHub"))),
        ("19-signed-in", view(.signedIn(who: "ada@example.com"))),
        ("20-failed", view(.ended(.failed), error: SignInPageView.Problem("GitHub refused the sign-in: the app is not allowed to see your email."))),
        ("21-expired", view(.ended(.expired))),
        ("22-cancelled", view(.ended(.cancelled))),
        ("30-stopped-signed-in", view(.ended(.stoppedSignedIn(who: "ada@example.com")))),
        ("23-waiting", view(.waiting(message: "Reading how Acme Notes lets you sign in…"))),
        ("24-recovery-code", view(.recoveryCode(email: "ada@example.com"))),
        ("25-new-password", view(.newPassword(email: "ada@example.com"),
                                 error: SignInPageView.Problem("Choose a stronger password: add a number or a symbol.", field: .newPassword))),
        ("26-choose-second-factor", view(.chooseSecondFactor([SignInPageView.Factor(id: "f1", label: "Authenticator app"),
                                                               SignInPageView.Factor(id: "f2", label: "Phone ending in 123")]))),
        ("27-enroll-phone-code", view(.secondFactor(.phone(number: "+44 7700 900123"), enrolling: true))),
        ("28-offer-enrolment", view(.offerEnrolment(phone: true))),
        ("29-enroll-phone", view(.enrollPhone())),
    ]
}
