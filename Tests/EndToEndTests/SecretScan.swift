import Foundation

/// Collects, for the whole end-to-end suite, every line authd and authctl printed, the command
/// line of every process the suite started, and every secret the development servers handed out
/// or received (and the codes and ID tokens the tests fetched), into `$AUTHD_SECRET_SCAN_DIR`.
/// `scripts/scan-secrets` reads the folder after the suite and fails on any secret in any output
/// or on any command line (which every user of the computer can read in `/proc/PID/cmdline`).
/// Without the variable (a single test run by hand) nothing is collected.
enum SecretScan {
    static let directory: URL? = ProcessInfo.processInfo.environment["AUTHD_SECRET_SCAN_DIR"].map { URL(fileURLWithPath: $0) }

    /// Where a development server should append its secrets, or nil when nothing is collected.
    static func secretsFile(for name: String) -> String? {
        directory?.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).secrets").path
    }

    /// Keeps the output of a finished process when it is authd or authctl (or runs one), leaving
    /// out the standard output of `authctl token`, the one place a client asked for a token.
    static func collect(executable: String, arguments: [String], stdout: String, stderr: String) {
        guard let directory else { return }
        let names = ([executable] + arguments).map { ($0 as NSString).lastPathComponent }
        guard let program = names.first(where: { $0 == "authd" || $0 == "authctl" }) else { return }
        let askedForToken = executable.hasSuffix("/authctl") && arguments.first(where: { !$0.hasPrefix("-") }) == "token"
        let kept = (askedForToken ? "" : stdout) + "\n" + stderr
        let file = directory.appendingPathComponent("\(program)-\(UUID().uuidString.prefix(8)).out")
        FileManager.default.createFile(atPath: file.path, contents: Data(kept.utf8))
    }

    /// Keeps the command line of a process about to start, whatever it runs: one `.argv` file,
    /// the executable and each argument ended by a NUL byte, as `/proc/PID/cmdline` shows them.
    static func collectCommandLine(executable: String, arguments: [String]) {
        guard let directory else { return }
        var bytes: [UInt8] = []
        for part in [executable] + arguments { bytes += Array(part.utf8) + [0] }
        let name = (executable as NSString).lastPathComponent
        let file = directory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).argv")
        FileManager.default.createFile(atPath: file.path, contents: Data(bytes))
    }

    /// Records secrets a test came by itself (a code from the development server's outbox, an ID
    /// token it minted), which the servers do not record. Short ones (codes) are looked for on
    /// command lines as whole arguments only.
    static func record(secrets: [String]) {
        guard let directory else { return }
        let file = directory.appendingPathComponent("harness-\(UUID().uuidString.prefix(8)).secrets")
        FileManager.default.createFile(atPath: file.path, contents: Data(secrets.map { $0 + "\n" }.joined().utf8))
    }
}
