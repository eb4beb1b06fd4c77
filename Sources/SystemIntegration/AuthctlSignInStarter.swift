import AuthCore
import FoundationEssentials
import Logging

/// Starts the sign-in chosen on a "sign in again" notice by running `authctl login`: a browser
/// sign-in as it is (authctl opens the browser and waits on its loopback listener), a password
/// or code sign-in in a terminal window (`x-terminal-emulator`, else `xdg-terminal-exec`), where
/// authctl asks. The window stays open after authctl ends so its last line can be read.
public struct AuthctlSignInStarter: SignInStarter {
    private let authctl: String
    private let environment: [String: String]
    private let logger: Logger

    /// Creates a starter running `authctl` (by default the one installed beside this program)
    /// with `environment` (the daemon's own: the desktop's display and bus are in it).
    public init(authctl: String = AuthctlSignInStarter.authctlBesideThisProgram(),
                environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger) {
        self.authctl = authctl
        self.environment = environment
        self.logger = logger
    }

    /// `authctl` in the directory of the running executable (`make install` and the package put
    /// authd and authctl's front together).
    public static func authctlBesideThisProgram() -> String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("authctl").path
    }

    /// Whether authctl is there, with a display to open a window or a browser on and a terminal
    /// program when one is needed.
    public func canStart(_ plan: SignInAgainPlan, inTerminal: Bool) -> Bool {
        guard let arguments = plan.authctlArguments(profile: "-"), FileManager.default.isExecutableFile(atPath: authctl),
              ["DISPLAY", "WAYLAND_DISPLAY"].contains(where: { !(environment[$0] ?? "").isEmpty }) else { return false }
        return Self.command(authctl: authctl, arguments: arguments, inTerminal: inTerminal, environment: environment) != nil
    }

    /// Runs the sign-in and returns when it ends; cancelling the task ends it.
    public func startSignIn(profile: String, plan: SignInAgainPlan, inTerminal: Bool) async {
        guard let arguments = plan.authctlArguments(profile: profile) else { return }
        guard let command = Self.command(authctl: authctl, arguments: arguments, inTerminal: inTerminal, environment: environment) else {
            logger.notice("no terminal program to sign in again in (x-terminal-emulator or xdg-terminal-exec): run 'authctl login' in a terminal",
                          metadata: ["session.profile": "\(profile)"])
            return
        }
        logger.info("starting the sign-in chosen on the notice", metadata: ["session.profile": "\(profile)", "process.executable": "\(command[0])"])
        let status = await Self.run(command, environment: environment)
        logger.info("the sign-in chosen on the notice ended", metadata: ["session.profile": "\(profile)", "process.status": "\(status.map(String.init) ?? "not started")"])
    }

    /// The command line: authctl itself, or a terminal running it (nil when none is found).
    static func command(authctl: String, arguments: [String], inTerminal: Bool, environment: [String: String]) -> [String]? {
        guard inTerminal else { return [authctl] + arguments }
        // sh keeps the window open after authctl ends, and passes every argument as it is.
        let keptOpen = ["/bin/sh", "-c", #""$0" "$@"; printf '\nPress Enter to close. '; read -r _"#, authctl] + arguments
        if let terminal = executable(named: "x-terminal-emulator", environment: environment) { return [terminal, "-e"] + keptOpen }
        if let terminal = executable(named: "xdg-terminal-exec", environment: environment) { return [terminal] + keptOpen }
        return nil
    }

    /// The first executable `name` on `PATH`.
    static func executable(named name: String, environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `command` with standard input from /dev/null and the daemon's output, and returns its
    /// exit status (nil when it could not start). Cancelling the task terminates it.
    private static func run(_ command: [String], environment: [String: String]) async -> Int32? {
        // Cancelled already (the daemon stops): no window that would outlive it.
        guard !Task.isCancelled, let process = SpawnedProcess(command, environment: environment) else { return nil }
        return await withTaskCancellationHandler {
            await process.exitStatus()
        } onCancel: {
            process.terminate()
        }
    }
}
