import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials

/// `authctl`: talk to authd. Data goes to stdout, diagnostics to stderr. This is the whole
/// command-line tool, inside the `authd` executable, which the `authctl` front runs (under the
/// name `authctl`) for everything but the plain `authctl token`.
struct Authctl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authctl",
        abstract: "Sign in to Supabase through authd and get bearer tokens for scripts and apps.",
        discussion: """
        Exit codes: 0 success; 1 other failure; 3 authd is not running or busy; 4 not signed in; \
        5 sign-in refused (wrong password, code or ID token); 6 the server is unreachable or failing; \
        7 the keyring is unavailable; 8 the browser sign-in failed or timed out; 9 a second factor must be \
        verified first (authctl mfa verify); 64 bad usage.
        """,
        version: AuthdVersion.string,
        subcommands: [Status.self, Login.self, Signup.self, Verify.self, Resend.self, ResetPassword.self, UserCommand.self, MFA.self, Identities.self, Claims.self,
                      Nonce.self, OpenURL.self,
                      Token.self, Logout.self, Watch.self, Apps.self, Profile.self, Doctor.self])
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(help: "The daemon's socket (default: $AUTHD_SOCKET or $XDG_RUNTIME_DIR/authd/authd.sock).")
    var socket: String?

    @Option(help: "The profile to act on (default: the daemon's default profile).")
    var profile: String?

    func connect() throws -> AuthdConnection {
        do { return try AuthdConnection.connect(socketPath: socket) } catch { throw Failure(error) }
    }

    /// Asks the daemon, on a connection of its own, for a method that takes only the profile.
    /// The timeout's default is the connection's.
    func call<M: RPCMethod>(_ method: M.Type, timeout: TimeInterval = 30) throws -> M.Result where M.Parameters == ProfileParameters {
        try connect().call(method, ProfileParameters(profile: profile), timeout: timeout)
    }
}
