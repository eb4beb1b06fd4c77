import ArgumentParser
import Foundation
import GoTrueDevServer

/// `authd-dev-server`: a GoTrue-compatible Supabase Auth server for development and tests.
/// State lives in memory and is gone when it stops. Never expose it beyond loopback.
@main
struct DevServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authd-dev-server",
        abstract: "A GoTrue-compatible development server (Supabase Auth) on 127.0.0.1, state in memory.",
        discussion: """
            Serves under /auth/v1: /health, /settings, /signup, /token (password, refresh_token, id_token, pkce), /user, \
            /logout, /otp, /verify (POST, and GET: an email's link), /recover, /resend, /reauthenticate, /authorize, \
            /user/identities/authorize, DELETE /user/identities/{id}, /sso and /.well-known/jwks.json; and MFA: \
            POST /factors (totp or phone), POST /factors/{id}/challenge, POST /factors/{id}/verify, DELETE /factors/{id}. \
            Messages go to the outbox (GET /admin/dev/outbox): phone MFA codes as type "mfa"; emails with a link carry it \
            as "link", with its "token_hash". POST /admin/dev/sso {"domains":[…],"email":…} registers an SSO provider whose \
            simulated IdP signs that email in. POST /admin/dev/settings changes mailer_autoconfirm, captcha_token, \
            update_password_require_reauthentication, reauthentication_window, allow_low_aal (seconds an aal1 session of a \
            user with a verified factor may live; null turns it off), anonymous_users (on by default), manual_linking (on by \
            default), saml_enabled, and smtp_max_frequency / sms_max_frequency (seconds before a message is sent again; 60).
            """)

    @Option(help: "Address to bind.")
    var host = "127.0.0.1"

    @Option(help: "Port to bind; 0 picks a free one (the line printed on start says which).")
    var port = 9999

    @Option(name: .customLong("access-token-lifetime"), help: "Access-token lifetime in seconds.")
    var accessTokenLifetime = 3600

    @Option(name: .customLong("reuse-interval"), help: "Seconds either side of a session's last refresh in which an older revoked refresh token is still answered (GoTrue's REUSE_INTERVAL).")
    var reuseInterval: Double = 0

    @Option(name: .customLong("jwt-secret"), help: "HS256 secret for access tokens.")
    var jwtSecret = DevServerOptions().jwtSecret

    @Option(name: .customLong("anon-key"), help: "Require this apikey header on every request, like the Supabase gateway.")
    var anonKey: String?

    @Option(name: .customLong("refresh-response-delay"), help: "Seconds to hold back a refresh answer after rotating the token (fault injection).")
    var refreshResponseDelay: Double = 0

    @Flag(name: .customLong("confirm-email"), help: "Require new email addresses to be confirmed with a code (MAILER_AUTOCONFIRM off).")
    var confirmEmail = false

    @Option(name: .customLong("otp-lifetime"), help: "Seconds a one-time code stays valid.")
    var otpLifetime: Double = 3600

    @Option(name: .customLong("id-token-client-id"), help: "A client ID accepted as the audience of ID tokens (repeatable).")
    var idTokenClientIDs: [String] = []

    @Option(name: .customLong("signing-algorithm"),
            help: "How access tokens are signed: HS256 (the JWT secret), or ES256 or RS256 with a key published at /.well-known/jwks.json.")
    var signingAlgorithm = "HS256"

    @Option(name: .customLong("captcha-token"),
            help: "Protect sign-up, codes, recovery and password sign-in with a CAPTCHA whose one accepted token is this.")
    var captchaToken: String?

    @Option(name: .customLong("outbox"), help: "Also append every email and SMS sent, as a JSON line, to this file.")
    var outbox: String?

    @Option(name: .customLong("record-secrets"), help: "Append every access token, refresh token and password this server sees to this file, one per line (for a test's secret scan).")
    var recordSecrets: String?

    @Option(name: .customLong("tls-cert"), help: "Serve HTTPS with this PEM certificate chain (leaf first), read again for every connection; needs --tls-key.")
    var tlsCertificate: String?

    @Option(name: .customLong("tls-key"), help: "The PEM private key of --tls-cert.")
    var tlsKey: String?

    func validate() throws {
        if accessTokenLifetime < 1 { throw ValidationError("--access-token-lifetime must be at least 1 second") }
        if otpLifetime <= 0 { throw ValidationError("--otp-lifetime must be positive") }
        if reuseInterval < 0 { throw ValidationError("--reuse-interval must not be negative") }
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        if !loopback { throw ValidationError("the development server only binds loopback addresses (127.0.0.1, ::1)") }
        if (tlsCertificate == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if captchaToken?.isEmpty == true { throw ValidationError("--captcha-token must not be empty") }
        if !["HS256", "ES256", "RS256"].contains(signingAlgorithm) { throw ValidationError("--signing-algorithm must be HS256, ES256 or RS256") }
    }

    func run() async throws {
        let hostForURL = host.contains(":") ? "[\(host)]" : host
        var options = DevServerOptions(jwtSecret: jwtSecret, accessTokenLifetime: accessTokenLifetime,
                                       reuseInterval: reuseInterval, anonKey: anonKey)
        options.refreshResponseDelay = refreshResponseDelay
        options.mailerAutoconfirm = !confirmEmail
        options.otpLifetime = otpLifetime
        if !idTokenClientIDs.isEmpty { options.idTokenClientIDs = idTokenClientIDs }
        options.outboxFile = outbox
        options.captchaToken = captchaToken
        options.signingAlgorithm = signingAlgorithm
        options.secretsFile = recordSecrets
        let tls = tlsCertificate.map { DevTLSFiles(certificatePath: $0, privateKeyPath: tlsKey ?? "") }
        let scheme = tls == nil ? "http" : "https"
        // The issuer URL names the port actually bound (port 0 picks one).
        let configured = options
        let server = try await DevHTTPServer.start(host: host, port: port, tls: tls) { boundPort in
            var options = configured
            options.externalURL = "\(scheme)://\(hostForURL):\(boundPort)"
            return DevAuthAPI(options: options)
        }
        FileHandle.standardOutput.write(Data("authd-dev-server listening on \(scheme)://\(hostForURL):\(server.port)\n".utf8))
        try await server.waitUntilClosed()
    }
}
