import AuthTestSupport
import Foundation

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
final class Spawned: @unchecked Sendable {
    // Unchecked: `process` is only used from the test that owns it.
    let process: Process
    let stdoutURL: URL
    let stderrURL: URL

    init(_ executable: String, _ arguments: [String], environment: [String: String], in directory: URL, name: String) throws {
        stdoutURL = directory.appendingPathComponent("\(name).out")
        stderrURL = directory.appendingPathComponent("\(name).err")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        SecretScan.collectCommandLine(executable: executable, arguments: arguments)
        process = try Process.launch(executable, arguments, environment: environment, stdout: stdoutURL, stderr: stderrURL,
                                     stdin: FileHandle.nullDevice)
    }

    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) {
        if !process.hasEnded { kill(process.processIdentifier, number) }
    }

    /// Stops the process (SIGTERM, then SIGKILL after 5 s), waits for it, and hands its output
    /// to the suite's secret scan.
    func stop() {
        signal(SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while !process.hasEnded, Date() < deadline { usleep(20_000) }
        signal(SIGKILL)
        process.waitUntilExit()
        collectForScan()
    }

    private var collected = false

    /// Hands the output to the secret scan once (on `stop()`, or when the object goes away).
    private func collectForScan() {
        guard !collected, let executable = process.executableURL?.path else { return }
        collected = true
        SecretScan.collect(executable: executable, arguments: process.arguments ?? [], stdout: stdout, stderr: stderr)
    }

    deinit {
        if !process.isRunning { collectForScan() }
    }

    /// Waits up to `timeout` seconds for the process to end; its exit status, or nil while it runs.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while !process.hasEnded, Date() < deadline { usleep(20_000) }
        guard process.hasEnded else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
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
    var stdin: Any = FileHandle.nullDevice
    if let input {
        let inURL = files.directory.appendingPathComponent("in")
        try Data(input.utf8).write(to: inURL)
        stdin = try FileHandle(forReadingFrom: inURL)
    }
    SecretScan.collectCommandLine(executable: executable, arguments: arguments)
    let process = try Process.launch(executable, arguments, environment: environment, stdout: files.stdout, stderr: files.stderr, stdin: stdin)
    let deadline = Date().addingTimeInterval(timeout)
    while !process.hasEnded, Date() < deadline { usleep(10_000) }
    if !process.hasEnded {
        process.terminate()
        throw CommandTimedOut(command: ([executable] + arguments).joined(separator: " "))
    }
    process.waitUntilExit()
    let output = files.read()
    let completed = Completed(status: process.terminationStatus, stdout: output.stdout, stderr: output.stderr)
    SecretScan.collect(executable: executable, arguments: arguments, stdout: completed.stdout, stderr: completed.stderr)
    return completed
}

extension Process {
    /// Starts `executable` with its output appended to the two files. An executable a test has
    /// just written (a copied lookalike) can be refused with ETXTBSY for a moment: a child another
    /// test forked meanwhile holds the copy's write descriptor until it execs. A fresh Process
    /// then tries again, for up to two seconds.
    static func launch(_ executable: String, _ arguments: [String], environment: [String: String], stdout: URL, stderr: URL,
                       stdin: Any) throws -> Process {
        var attempts = 0
        while true {
            let candidate = Process()
            candidate.executableURL = URL(fileURLWithPath: executable)
            candidate.arguments = arguments
            candidate.environment = environment
            candidate.standardOutput = try FileHandle(forWritingTo: stdout)
            candidate.standardError = try FileHandle(forWritingTo: stderr)
            candidate.standardInput = stdin
            do {
                try candidate.run()
                return candidate
            } catch where attempts < 100 && isTextFileBusy(error) {
                attempts += 1
                usleep(20_000)
            }
        }
    }

    private static func isTextFileBusy(_ error: Error) -> Bool {
        let error = error as NSError
        let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
        return (error.domain == NSPOSIXErrorDomain && error.code == Int(ETXTBSY))
            || (underlying?.domain == NSPOSIXErrorDomain && underlying?.code == Int(ETXTBSY))
    }

    /// Whether the process has ended, as the kernel says: gone, or a zombie Foundation has not
    /// reaped yet. `isRunning` turns false only once Foundation's SIGCHLD handler has run on a
    /// Dispatch queue, and on Linux those queues share threads with the cooperative pool: with
    /// the whole suite running on two cores that took seconds, and a bad-configuration authd
    /// that exits at once was reported as timed out after 20 s.
    var hasEnded: Bool {
        guard isRunning else { return true }
        guard let stat = try? String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8),
              let nameEnd = stat.lastIndex(of: ")") else { return true }
        // The state follows the parenthesised command name: "<pid> (<name>) <state> …".
        let state = stat[stat.index(after: nameEnd)...].first { $0 != " " }
        return state == "Z" || state == "X"
    }
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
