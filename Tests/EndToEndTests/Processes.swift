import AuthTestSupport
import Foundation
import Synchronization

/// Locates the built executables and runs them as real processes.
enum Binaries {
    /// `<package>/.build/debug`, or `$AUTHD_BIN_DIR`.
    static let directory: URL = {
        if let dir = ProcessInfo.processInfo.environment["AUTHD_BIN_DIR"] { return URL(fileURLWithPath: dir) }
        return repositoryRoot.appendingPathComponent(".build/debug")
    }()

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// The checkout the tests run from (for `scripts/`).
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// A started process whose output goes to files (so nothing blocks on a full pipe).
final class Spawned: Sendable {
    /// The child itself.
    let process: ChildProcess
    let stdoutURL: URL
    let stderrURL: URL
    /// Whether the output went to the secret scan already.
    private let collected = Mutex(false)

    init(_ executable: String, _ arguments: [String], environment: [String: String], in directory: URL, name: String) throws {
        stdoutURL = directory.appendingPathComponent("\(name).out")
        stderrURL = directory.appendingPathComponent("\(name).err")
        SecretScan.collectCommandLine(executable: executable, arguments: arguments)
        process = try ChildProcess(executable, arguments, environment: environment, stdout: stdoutURL.path, stderr: stderrURL.path)
    }

    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) {
        process.signal(number)
    }

    /// Stops the process (SIGTERM, then SIGKILL after 5 s), waits for it, and hands its output
    /// to the suite's secret scan.
    func stop() {
        process.stop()
        collectForScan()
    }

    /// Hands the output to the secret scan once (on `stop()`, or when the object goes away).
    private func collectForScan() {
        guard collected.withLock({ done in defer { done = true }; return !done }) else { return }
        SecretScan.collect(executable: process.executable, arguments: process.arguments, stdout: stdout, stderr: stderr)
    }

    deinit {
        if process.hasEnded { collectForScan() }
    }

    /// Waits up to `timeout` seconds for the process to end; its exit status, or nil while it runs.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        process.wait(timeout: timeout)
    }

    /// Waits until `predicate` holds on stdout, up to `timeout` seconds.
    func waitForOutput(timeout: TimeInterval = 15, _ predicate: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if predicate(stdout) { return true }
            usleep(50_000)
        }
        return predicate(stdout)
    }
}

/// Polls `condition` every 100 ms for up to `timeout` seconds; whether it held.
func waitUntil(timeout: TimeInterval = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(100_000)
    }
    return try condition()
}

/// The result of a command that ran to completion.
struct Completed {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs a command to completion with `input` on stdin; fails after `timeout` seconds.
/// Output goes to files, not pipes: a daemon the command leaves behind (gnome-keyring under
/// dbus-run-session) may hold a pipe open long after the command itself has exited.
func runCommand(_ executable: String, _ arguments: [String], environment: [String: String], input: String? = nil,
                timeout: TimeInterval = 60) throws -> Completed {
    let files = try OutputFiles()
    defer { files.remove() }
    // The input comes from a file too, for the reason `OutputFiles` gives: through a pipe, curl
    // waited 60 s for the end of its input on a loaded run.
    var stdin: String?
    if let input {
        let inURL = files.directory.appendingPathComponent("in")
        try Data(input.utf8).write(to: inURL)
        stdin = inURL.path
    }
    SecretScan.collectCommandLine(executable: executable, arguments: arguments)
    let process = try ChildProcess(executable, arguments, environment: environment, stdin: stdin,
                                   stdout: files.stdout.path, stderr: files.stderr.path)
    guard let status = process.wait(timeout: timeout) else {
        process.stop(grace: 1)
        throw CommandTimedOut(command: ([executable] + arguments).joined(separator: " "))
    }
    let output = files.read()
    let completed = Completed(status: status, stdout: output.stdout, stderr: output.stderr)
    SecretScan.collect(executable: executable, arguments: arguments, stdout: completed.stdout, stderr: completed.stderr)
    return completed
}

struct CommandTimedOut: Error, CustomStringConvertible {
    let command: String
    var description: String { "timed out: \(command)" }
}

/// A home folder owned by nobody (uid 65534) inside a new temporary root that everyone may
/// traverse, for tests that run the daemon and its clients as another user. The caller removes
/// `root`.
func nobodysHome(_ name: String) throws -> (root: URL, home: String) {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("authd-\(name)-\(UUID().uuidString.prefix(6))")
    let home = root.appendingPathComponent("home")
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
    chmod(root.path, 0o755)
    chown(home.path, 65534, 65534)
    return (root, home.path)
}

/// The pid a helper wrote to `file` (`echo $! >file`), or nil while there is none.
func recordedPID(in file: String) -> Int32? {
    (try? String(contentsOfFile: file, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
}

/// Whether the process holds a socket (one of its descriptors is one), by `/proc/PID/fd`.
func holdsASocket(_ pid: pid_t) -> Bool {
    let descriptors = "/proc/\(pid)/fd"
    return ((try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []).contains { fd in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptors)/\(fd)"))?.hasPrefix("socket:[") == true
    }
}
