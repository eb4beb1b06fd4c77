import ArgumentParser
import AuthCore
import AuthdClient
import AuthProtocol
import FoundationEssentials
import Glibc
import FoundationGaps

/// `authctl login`: every way of signing in. With nothing to say how, authd's own sign-in page
/// in the browser (`--web`), or questions on the terminal where no browser can be shown;
/// `--email` for email + password; `--otp` for a one-time code by email or SMS; `--provider`
/// for a browser sign-in with PKCE, or with `--id-token-file` for an ID token the caller
/// already holds; `--anonymous` for a new anonymous user; `--with-session` to take over a
/// session an app kept.
struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in (in the browser, or with a password, a one-time code or an ID token).",
        discussion: """
        authctl login                                authd's sign-in page in your browser, every way the project offers; \
        without a desktop session, asks for the email and then the password or a code on the terminal
        authctl login --web [--email E]              authd's sign-in page, even without a desktop session (--no-browser prints its address)
        authctl login --email E                      email + password (asked without echo, or --password-stdin)
        authctl login --otp --email E | --phone P    a one-time code sent by email or SMS, then entered here
        authctl login --provider google              browser sign-in with PKCE; --no-browser prints the URL instead
        authctl login --provider apple --id-token-file F [--nonce N] [--access-token-file F]    an ID token from Apple or Google
        authctl login --otp --link --email E         the emailed link, opened on this computer, signs in (no code to type)
        authctl login --sso example.com              enterprise SSO (SAML) in the browser; or --sso-provider ID
        authctl login --anonymous                    a new anonymous user; keep it with 'authctl user update --email E'
        authctl login --with-session < FILE          take over an app's session: its refresh token, or the session JSON it stored
        A browser sign-in waits on a loopback address (http://127.0.0.1:PORT/callback) unless --redirect-url names \
        an app's custom scheme, whose callback reaches authd through 'authctl open-url'. Exit 5 when the \
        credentials are refused, 8 when the browser sign-in fails or times out, 9 when signed in at aal1 with \
        the account's second factor left to verify ('authctl mfa verify'; asked here only on a terminal).
        """)

    @OptionGroup var global: GlobalOptions

    @Option(help: "The account's email address.")
    var email: String?

    @Option(help: "The account's phone number, in international form (+15551234567); with --otp.")
    var phone: String?

    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input (first line).")
    var passwordStdin = false

    @Flag(help: "Sign in with a one-time code sent to --email or --phone.")
    var otp = false

    @Flag(name: .customLong("create-user"), help: "With --otp: create the account when the address is new.")
    var createUser = false

    @Flag(name: .customLong("send-only"), help: "With --otp: send the code and exit; finish with 'authctl verify'.")
    var sendOnly = false

    @Flag(name: .customLong("code-stdin"), help: "With --otp: read the code from standard input instead of the terminal.")
    var codeStdin = false

    @Option(help: "Sign in with an OAuth provider (google, apple, github, …).")
    var provider: String?

    @Option(name: .customLong("id-token-file"), help: "With --provider: a file holding an ID token from that provider ('-' for standard input).")
    var idTokenFile: String?

    @Option(name: .customLong("access-token-file"),
            help: "With --id-token-file: a file holding the provider's access token, when the ID token has an at_hash claim ('-' for standard input).")
    var accessTokenFile: String?

    /// Gone: a token on the command line can be read by every user of the computer. Kept, hidden,
    /// only to say so and what to use instead.
    @Option(name: .customLong("access-token"), help: ArgumentHelp(visibility: .private))
    var accessTokenArgument: String?

    @Option(help: "With --id-token-file: the raw nonce whose SHA-256 is in the ID token (see 'authctl nonce').")
    var nonce: String?

    @Option(help: "With --provider: extra provider scopes, space-separated.")
    var scopes: String?

    @OptionGroup var browser: BrowserFlowOptions

    @Flag(name: .customLong("no-browser"), help: "With --web, --provider, --sso or --sso-provider: print the URL instead of opening a browser (SSH, headless).")
    var noBrowser = false

    @Flag(help: "Sign in on authd's own page in the browser, every way the project offers (what 'authctl login' alone does on a desktop); --email fills it in.")
    var web = false

    @Flag(help: "With --otp --email: sign in by opening the emailed link on this computer instead of typing the code.")
    var link = false

    @Option(help: "Sign in through your organization's single sign-on (SAML): its email domain, e.g. example.com.")
    var sso: String?

    @Option(name: .customLong("sso-provider"), help: "Sign in through the project's SSO provider with this id.")
    var ssoProvider: String?

    @Flag(help: "Sign in as a new anonymous user (the project must allow it); give it an email later with 'authctl user update --email'.")
    var anonymous = false

    @Flag(name: .customLong("with-session"),
          help: "Take over a session an app kept: read its refresh token, or the session JSON Supabase's clients store, from standard input. The app's copy is spent: it must forget it.")
    var withSession = false

    @OptionGroup var captcha: CaptchaTokenOption

    @Flag(help: "Print the resulting status as one JSON object.")
    var json = false

    func validate() throws {
        if accessTokenArgument != nil {
            throw ValidationError("""
                --access-token is no longer taken: a token on the command line can be read by every user of this computer \
                (/proc/PID/cmdline). Put it in a file only you can read and pass --access-token-file FILE ('-' for standard input)
                """)
        }
        let comesBack = provider != nil || sso != nil || ssoProvider != nil || link || onPage
        if web, provider != nil || sso != nil || ssoProvider != nil || phone != nil || otp || anonymous || withSession || passwordStdin
                   || idTokenFile != nil || captcha.file != nil || browser.areSet {
            throw ValidationError("--web opens the sign-in page, where you choose how: give it at most --email and --no-browser")
        }
        if provider == nil, idTokenFile != nil || accessTokenFile != nil || nonce != nil || scopes != nil {
            throw ValidationError("--id-token-file, --nonce, --access-token-file and --scopes need --provider")
        }
        if !comesBack, browser.areSet || noBrowser {
            throw ValidationError("--no-browser, --redirect-url and --timeout need --provider, --sso, --sso-provider or --link (--no-browser also --web)")
        }
        if isInteractive {
            if passwordStdin { throw ValidationError("--password-stdin needs --email: the password goes with an address") }
            if createUser || sendOnly || codeStdin { throw ValidationError("--create-user, --send-only and --code-stdin need --otp") }
            if browser.areSet { throw ValidationError("--redirect-url and --timeout are for --provider, --sso, --sso-provider and --link") }
            if onPage, captcha.file != nil {
                throw ValidationError("the sign-in page takes no CAPTCHA token: give --email (with --captcha-token-file) to sign in with a password here")
            }
            return
        }
        if sso != nil || ssoProvider != nil {
            if sso != nil && ssoProvider != nil { throw ValidationError("give either --sso or --sso-provider") }
            if provider != nil || email != nil || phone != nil || otp || anonymous || withSession || passwordStdin {
                throw ValidationError("--sso and --sso-provider sign in by themselves: no --provider, --email, --phone, --otp or --password-stdin")
            }
            if captcha.file != nil { throw ValidationError("an SSO sign-in needs no CAPTCHA") }
        }
        if link {
            if !otp || email == nil { throw ValidationError("--link goes with --otp --email (a text message carries only the code)") }
            if sendOnly || codeStdin { throw ValidationError("--link waits for the link: no --send-only or --code-stdin") }
            if noBrowser { throw ValidationError("--link opens no browser: you open the email's link") }
        }
        if accessTokenFile != nil, idTokenFile == nil { throw ValidationError("--access-token-file goes with --id-token-file") }
        if idTokenFile == "-", accessTokenFile == "-" {
            throw ValidationError("only one of --id-token-file and --access-token-file can be '-' (standard input)")
        }
        if provider != nil, email != nil || phone != nil || otp { throw ValidationError("--provider cannot be combined with --email, --phone or --otp") }
        if provider != nil, captcha.file != nil {
            throw ValidationError("--captcha-token-file is for password and --otp sign-in: a --provider sign-in needs no CAPTCHA")
        }
        if captcha.readsStandardInput, passwordStdin || codeStdin {
            throw ValidationError("only one of --captcha-token-file, --password-stdin and --code-stdin can read standard input")
        }
        if idTokenFile != nil, browser.areSet || noBrowser { throw ValidationError("--id-token-file signs in without a browser") }
        if !otp, createUser || sendOnly || codeStdin { throw ValidationError("--create-user, --send-only and --code-stdin need --otp") }
        if anonymous || withSession {
            let way = anonymous ? "--anonymous" : "--with-session"
            if anonymous && withSession { throw ValidationError("give either --anonymous or --with-session") }
            if email != nil || phone != nil || otp || provider != nil || passwordStdin {
                throw ValidationError("\(way) cannot be combined with --email, --phone, --otp, --password-stdin or --provider")
            }
            if withSession, captcha.file != nil { throw ValidationError("--with-session needs no CAPTCHA") }
            return
        }
        if sso != nil || ssoProvider != nil { return }
        if provider == nil, (email == nil) == (phone == nil) || (phone != nil && !otp) {
            throw ValidationError(otp ? "give either --email or --phone" : "give --email (or --otp with --phone, --provider, --anonymous or --with-session)")
        }
    }

    func run() throws {
        try runReporting {
            // Read before connecting: authd closes a connection that sends nothing for a minute,
            // and someone pasting a token at the prompt may take longer.
            let handedOver = withSession ? try Self.handedOverRefreshToken() : nil
            let connection = try global.connect()
            var status: SessionStatus
            if anonymous {
                status = try connection.call(Methods.SignInAnonymously.self,
                                             .init(profile: global.profile, captchaToken: try captcha.token(for: connection)), timeout: 60)
            } else if isInteractive {
                status = try signInInteractively(connection)
            } else if let handedOver {
                status = try Self.takeOver(connection, profile: global.profile, refreshToken: handedOver)
            } else if sso != nil || ssoProvider != nil {
                let (domain, id) = (sso, ssoProvider)
                let profile = global.profile
                status = try BrowserSignIn(connection: connection, profile: profile, purpose: "sign in with \(domain.map { "your \($0) account" } ?? "single sign-on")",
                                           redirectURL: browser.redirectURL, openBrowser: !noBrowser, timeout: TimeInterval(browser.timeout)) { redirect in
                    .init(try connection.call(Methods.SingleSignOnBegin.self, .init(profile: profile, domain: domain, providerID: id, redirectTo: redirect)))
                }.run()
            } else if link, let email {
                let request = Methods.SendCode.Parameters(profile: global.profile, email: email, purpose: "sign_in", createUser: createUser,
                                                          captchaToken: try captcha.token(for: connection))
                status = try BrowserSignIn.emailLink(request, purpose: "sign in", connection: connection, redirectURL: browser.redirectURL,
                                                     timeout: TimeInterval(browser.timeout)) { sent in
                    "A sign-in link was sent to \(sent.sentTo.escapedForTerminal). Open it on this computer (its code works too: authctl verify --email \(sent.sentTo.escapedForTerminal))."
                }.run()
            } else if let provider, let idTokenFile {
                status = try connection.call(Methods.SignInWithIdToken.self,
                                             .init(profile: global.profile, provider: provider, idToken: try readTokenFile(idTokenFile, what: "an ID token"),
                                                   accessToken: try accessTokenFile.map { try readTokenFile($0, what: "an access token") },
                                                   nonce: nonce), timeout: 60)
            } else if let provider {
                status = try BrowserSignIn.provider(provider, scopes: scopes, connection: connection, profile: global.profile,
                                                    redirectURL: browser.redirectURL, openBrowser: !noBrowser, timeout: TimeInterval(browser.timeout)).run()
            } else if otp {
                let captchaToken = try captcha.token(for: connection)
                let sent = try connection.call(Methods.SendCode.self, .init(profile: global.profile, email: email, phone: phone,
                                                                            purpose: "sign_in", createUser: createUser, captchaToken: captchaToken),
                                               timeout: 60)
                let flag = email != nil ? "--email" : "--phone"
                let channel = sent.channel.escapedForTerminal, sentTo = sent.sentTo.escapedForTerminal
                if sendOnly {
                    note("A code was sent by \(channel) to \(sentTo). Finish with: authctl verify \(flag) \(sentTo) (it asks for the code)")
                    return
                }
                note("A code was sent by \(channel) to \(sentTo).")
                let code = try SecretReader.secret("code", prompt: "Code: ", fromStandardInput: codeStdin, standardInputFlag: "--code-stdin")
                status = try connection.call(Methods.VerifyCode.self, .init(profile: global.profile, email: email, phone: phone, code: code),
                                             timeout: 60)
            } else {
                let captchaToken = try captcha.token(for: connection)
                let email = email ?? ""
                let password = try SecretReader.secret("password", prompt: "Password for \(email): ", fromStandardInput: passwordStdin,
                                                       standardInputFlag: "--password-stdin")
                guard !password.isEmpty else { throw Failure("the password is empty", .signInRefused) }
                status = try connection.call(Methods.SignInWithPassword.self,
                                             .init(profile: global.profile, email: email, password: password, captchaToken: captchaToken), timeout: 60)
            }
            if anonymous, status.isSignedIn {
                note("This user has no email address: it is lost when signed out. Keep it with 'authctl user update --email ADDRESS'.")
            }
            if withSession, status.isSignedIn { note(Self.takeOverNote(status)) }
            let second = SecondFactorPrompt.afterSignIn(status, connection: connection)
            if second.status.isSignedIn { try reportSignedIn(second.status, json: json) } else if json { try printJSON(second.status) }
            // Signed in at aal1 with a second factor left to verify (or no longer signed in): the exit status says so.
            if let failure = second.failure { throw failure }
        }
    }

    /// Whether nothing says how to sign in (or `--web` says the page): authd's sign-in page, or
    /// the terminal's questions.
    private var isInteractive: Bool {
        web || (email == nil && phone == nil && !otp && provider == nil && sso == nil && ssoProvider == nil && !anonymous && !withSession && !link
                && idTokenFile == nil)
    }

    /// Whether the sign-in happens on authd's page: asked for, or a browser can be shown here.
    private var onPage: Bool {
        isInteractive && (web || noBrowser || BrowserCommand.hasBrowser(environment: ProcessInfo.processInfo.environment))
    }

    /// The sign-in page in the browser where one can be shown, else the terminal's questions.
    private func signInInteractively(_ connection: AuthdConnection) throws -> SessionStatus {
        if onPage {
            return try PageSignIn(connection: connection, profile: global.profile, email: email, method: email == nil ? nil : "password",
                                  openBrowser: !noBrowser).run()
        }
        guard SecretReader.hasTerminal else {
            throw Failure("no desktop session to open the sign-in page in and no terminal to ask on: give --email ADDRESS (with --password-stdin), or --web to print the sign-in page's address",
                          .usage)
        }
        return try TerminalSignIn(connection: connection, profile: global.profile, captchaToken: try captcha.token(for: connection)).run()
    }

    /// What the user must do about the app's copy once authd holds its session. The take-over
    /// refreshed the session twice unless `degraded` is set: the app's refresh token is then two
    /// steps behind, and GoTrue ends the whole session when it sees it again. While the second
    /// refresh waits for a retry, the copy is still the parent of authd's token and gets it.
    static func takeOverNote(_ status: SessionStatus) -> String {
        let delete = "Delete the app's stored copy of the session: should the app present its old refresh token again, the server takes it for a stolen one and ends the session, for authd and every app alike."
        guard let degraded = status.degraded else { return "authd now refreshes this session. " + delete }
        return "authd holds this session but could not refresh it a second time yet (\(degraded.detail.escapedForTerminal)): until it does, the app's old refresh token still gets tokens of this session. authd retries on its own ('authctl status' shows when). Quit the app now. " + delete
    }

    /// Takes over the session of `refreshToken`. Without an answer, authd may have done it all the
    /// same, which the message says rather than suggest running it again (exit 3 would mean
    /// "start authd and retry"): a spent refresh token presented again can end the session.
    static func takeOver(_ connection: AuthdConnection, profile: String?, refreshToken: String) throws -> SessionStatus {
        do {
            // As long as the client libraries wait: up to three exchanges with GoTrue and the keyring's writes.
            return try connection.call(Methods.SignInWithRefreshToken.self, .init(profile: profile, refreshToken: refreshToken), timeout: 120)
        } catch {
            switch error {
            case .daemonUnavailable, .timedOut:
                throw Failure("no answer from authd to the take-over (\(error.readableDescription)): it may have taken the session over all the same. Run 'authctl status' first, and take it over again only if it does not show the app's user: presenting a spent refresh token can end the session", .failure)
            default: throw error
            }
        }
    }

    /// The refresh token `--with-session` takes: asked for without echo on a terminal, else read
    /// from standard input to its end (a stored session's JSON may span lines).
    private static func handedOverRefreshToken() throws -> String {
        let text: String
        if isatty(STDIN_FILENO) == 1 {
            text = try SecretReader.fromTerminal(prompt: "Refresh token (or the stored session's JSON): ", echo: false,
                                                 otherwise: "pipe it on standard input")
        } else {
            text = String(decoding: StandardStreams.readToEnd() ?? Data(), as: UTF8.self)
        }
        guard let token = StoredSession.refreshToken(in: text) else {
            throw Failure("no refresh token on standard input: give the session's refresh_token, or the session JSON the app stored (with a \"refresh_token\" member)", .failure)
        }
        return token
    }

}

/// Prints "Signed in as …" on stderr, or the status as JSON on stdout.
func reportSignedIn(_ status: SessionStatus, json: Bool, verb: String = "Signed in") throws {
    if json { try printJSON(status) }
    note("\(verb) as \((status.user?.displayName ?? "?").escapedForTerminal) (profile \(status.profile.escapedForTerminal)).")
}

/// A message for people, on stderr. Its control characters are escaped, all but the line breaks,
/// which are the caller's; callers escape what they quote from outside with `escapedForTerminal`,
/// line breaks included.
func note(_ text: String) {
    StandardStreams.writeError("\(TerminalText.escapedKeepingLineBreaks(text))\n")
}

extension SecondFactorPrompt {
    /// After a sign-in to an account with a verified second factor (the session is `aal1`, its
    /// next level `aal2`): asks for the factor's code on the terminal, or says how to verify later
    /// when there is no terminal. The session stays signed in at `aal1` unless the code is
    /// verified. Whenever the factor is left unverified (no terminal to ask on, a kind authctl
    /// cannot verify, a wrong code), `failure` says why, with the exit status that fits the
    /// session as it is then (9: verify later; 4: the server ended it meanwhile), so a script
    /// that goes on to need `aal2` learns from the exit status alone that it is not there.
    static func afterSignIn(_ status: SessionStatus, connection: AuthdConnection) -> (status: SessionStatus, failure: Failure?) {
        guard status.needsSecondFactor else { return (status, nil) }
        let level = (status.aal ?? "aal1").escapedForTerminal
        let later = "verify it with 'authctl mfa verify' (apps that ask for aal2 wait for it)"
        guard SecretReader.hasTerminal else {
            note("Signed in at \(level); the account has a second factor: \(later).")
            return (status, Failure("the second factor was not verified: no terminal to ask for its code on", .mfaRequired))
        }
        do {
            let listed = try connection.call(Methods.ListFactors.self, ProfileParameters(profile: status.profile), timeout: 60)
            // Only the kinds authctl can verify here; an account with another (a security key) verifies it in its own app.
            let usable = listed.factors.filter { $0.status == "verified" && ["totp", "phone"].contains($0.type) }
            guard !usable.isEmpty else {
                note("Signed in at \(level); the account's second factor is of a kind authctl cannot verify: use the app that enrolled it.")
                return (status, Failure("the second factor was not verified: authctl cannot verify its kind", .mfaRequired))
            }
            return (try verify(try choose(from: usable, requested: nil), connection: connection, profile: status.profile, codeFromStandardInput: false), nil)
        } catch {
            let reason = (error as? AuthdError)?.readableDescription ?? (error as? Failure)?.message ?? "\(error)"
            let now = (try? connection.call(Methods.Status.self, ProfileParameters(profile: status.profile), timeout: 60)) ?? status
            guard now.isSignedIn else { return (now, Failure("\(reason); the session has ended: sign in again", .notSignedIn)) }
            note("Signed in at \(level), but the second factor was not verified; \(later).")
            return (now, Failure(reason, .mfaRequired))
        }
    }
}
