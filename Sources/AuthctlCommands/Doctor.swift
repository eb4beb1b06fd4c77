import ArgumentParser
import AuthConfig
import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps
#if canImport(Glibc)
import Glibc
#endif

/// `authctl doctor`: checks everything authd needs and says what to fix.
struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the configuration, socket, daemon, keyring, server and clock, and say what to fix (exit 0 when all is well, 1 otherwise).")

    @OptionGroup var global: GlobalOptions

    @Option(help: "The configuration file to check (default: $XDG_CONFIG_HOME/authd/config.toml).")
    var config: String?

    @Flag(help: "Print one JSON object per check.")
    var json = false

    /// A clock further off than this makes apps that compare `exp` with their own clock misjudge tokens.
    static let skewTolerance = 30.0

    struct Check: Encodable {
        let check: String
        let ok: Bool
        let detail: String
    }

    func run() throws {
        var checks: [Check] = []
        func record(_ name: String, _ ok: Bool, _ detail: String) {
            let check = Check(check: name, ok: ok, detail: detail)
            checks.append(check)
            if json { try? printJSON(check) } else { printLines(["\(ok ? "ok     " : "PROBLEM") \(name): \(detail)"]) }
        }

        let path = config ?? DaemonConfiguration.defaultPath()
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            do {
                let parsed = try DaemonConfiguration.parse(text, source: path)
                record("config", true, "\(path): \(parsed.profiles.count) profile(s), default '\(parsed.defaultProfile)'")
            } catch {
                record("config", false, "\(error.readableDescription). Fix the file (see man 5 authd.conf)")
            }
        } else {
            record("config", true, "no \(path); fine if authd is started with --url and --anon-key, else add a profile with 'authctl profile add'")
        }

        let socketPath: String
        do { socketPath = try global.socket ?? SocketPath.resolve() } catch {
            record("socket", false, error.readableDescription)
            return try finish(checks)
        }
        let directory = socketPath.pathDirectory
        var info = stat()
        if stat(directory, &info) != 0 {
            record("socket", false, "\(directory) does not exist: authd is not running. Start it with 'systemctl --user enable --now authd.socket'")
        } else if info.st_uid != getuid() || info.st_mode & 0o077 != 0 {
            record("socket", false, "\(directory) is not private (owner uid \(info.st_uid), mode \(String(info.st_mode & 0o777, radix: 8))); it must be yours with mode 0700")
        } else {
            record("socket", true, socketPath)
        }

        let connection: AuthdConnection
        let hello: Methods.Hello.Result
        do {
            connection = try AuthdConnection.connect(socketPath: socketPath)
            hello = try connection.call(Methods.Hello.self, .init(client: "authctl doctor"), timeout: 10)
            if let warning = ProtocolCompatibility.warning(daemonVersion: hello.protocolVersion) {
                record("daemon", false, "authd \(hello.daemonVersion): \(warning)")
            } else {
                record("daemon", true, "authd \(hello.daemonVersion), protocol \(hello.protocolVersion), profiles: \(hello.profiles.joined(separator: ", "))")
            }
        } catch {
            record("daemon", false, Failure(error).message)
            return try finish(checks)
        }

        let profiles = global.profile.map { [$0] } ?? hello.profiles
        for profile in profiles {
            let prefix = profiles.count > 1 ? "\(profile): " : ""
            do {
                let status = try connection.call(Methods.Status.self, ProfileParameters(profile: profile), timeout: 15)
                if status.keyring == "ok" {
                    record("keyring", true, "\(prefix)reachable and unlocked")
                } else {
                    record("keyring", false, "\(prefix)\(status.keyringDetail ?? "unavailable")")
                }
                record("session", status.isSignedIn, prefix + Self.summary(status))
                let server = try connection.call(Methods.CheckServer.self, ProfileParameters(profile: profile), timeout: 40)
                if !server.reachable {
                    record("server", false, "\(prefix)\(server.detail ?? "no answer from \(server.server)"). Check the network and the profile's url")
                } else if let skew = server.clockSkew, abs(skew) > Self.skewTolerance {
                    record("clock", false, "\(prefix)this machine's clock is \(Int(abs(skew))) s \(skew > 0 ? "ahead of" : "behind") \(server.server); apps comparing token expiry with it will misjudge tokens. Turn on time sync: timedatectl set-ntp true")
                } else {
                    record("server", true, "\(prefix)\(server.server) answers" + (server.clockSkew.map { "; clock within \(Int(max(1, abs($0)).rounded())) s of the server's" } ?? ""))
                }
            } catch {
                record("profile", false, "\(prefix)\(Failure(error).message)")
            }
        }
        try finish(checks)
    }

    /// The session in a few words, with what to do when there is none.
    static func summary(_ status: SessionStatus) -> String {
        let who = status.user?.displayName ?? "?"
        switch status.state {
        case .signedIn, .refreshing:
            return "signed in as \(who), token " + (status.expiresAt.map { StatusText.validity(until: $0, now: Date()) } ?? "of unknown validity")
        case .signedOut:
            return "not signed in" + (status.signOutReason.map { " (session ended: \($0))" } ?? "") + ": run 'authctl login'"
        case .keyringUnavailable:
            return "unknown until the keyring can be read"
        default:
            return status.state.rawValue.replacing("_", with: " ")
        }
    }

    private func finish(_ checks: [Check]) throws {
        if checks.contains(where: { !$0.ok }) { throw ExitCode.failure }
    }
}
