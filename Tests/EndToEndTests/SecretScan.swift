import Foundation

/// Collects, for the whole end-to-end suite, every line authd and authctl printed and every
/// secret the development servers handed out or received, into `$AUTHD_SECRET_SCAN_DIR`.
/// `scripts/scan-secrets` reads the folder after the suite and fails on any secret in any output.
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
}
