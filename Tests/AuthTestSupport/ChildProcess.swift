import CAuthdSystem
import Foundation
import FoundationGaps
import Synchronization

/// A program the tests start the way the product starts its children: `posix_spawn`, every
/// descriptor above the standard three closed, a clean signal state, a process group of its own.
///
/// Not Foundation's `Process`: its launch forked while another thread started a child of its own
/// and crashed the test process once in CI, and its `isRunning` and `terminationStatus` turn only
/// after a SIGCHLD handler has run on a Dispatch queue (which on a loaded two-core machine took
/// seconds, and read from another thread meanwhile trapped). Here the state is read from the
/// kernel with `waitpid`, under a lock, by whichever thread asks. Safe to use from any thread.
public final class ChildProcess: Sendable {
    /// The child's process id.
    public let processIdentifier: pid_t
    /// The path it was started from.
    public let executable: String
    /// Its arguments (without the program name).
    public let arguments: [String]
    /// The raw wait status once the child has been reaped; nil while it runs. Reaping happens
    /// only under this lock, so a signal is never sent to a pid the kernel has handed on.
    private let waitStatus = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` and exactly `environment`. Standard input reads
    /// `stdin` (a path; /dev/null when nil); output and error are appended to the two files
    /// (created when missing): files, not pipes, so nothing waits on a pipe that a long-lived
    /// grandchild still holds. An executable a test has just written can be refused with ETXTBSY
    /// for a moment (a child another thread spawned meanwhile holds the copy's descriptor until it
    /// execs): that is tried again for up to two seconds.
    public init(_ executable: String, _ arguments: [String], environment: [String: String],
                stdin: String? = nil, stdout: String, stderr: String) throws {
        self.executable = executable
        self.arguments = arguments
        var attempts = 0
        while true {
            let result = Self.spawn(executable, arguments, environment: environment, stdin: stdin ?? "/dev/null", stdout: stdout, stderr: stderr)
            switch result {
            case .success(let pid):
                processIdentifier = pid
                return
            case .failure(let error) where error.code == ETXTBSY && attempts < 100:
                attempts += 1
                usleep(20_000)
            case .failure(let error):
                throw error
            }
        }
    }

    private static func spawn(_ executable: String, _ arguments: [String], environment: [String: String],
                              stdin: String, stdout: String, stderr: String) -> Result<pid_t, ChildProcessError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        // Nothing of the test process's: its sockets, pipes to swift-test and other children's
        // files stay out of this child (and out of the grandchildren it may leave behind).
        authd_spawn_close_from(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let status = CleanSpawnAttributes.with { posix_spawn(&pid, executable, &actions, $0, argv, envp) }
        guard status == 0 else {
            return .failure(ChildProcessError(code: status, description: "cannot start \(executable): \(String(cString: strerror(status)))"))
        }
        return .success(pid)
    }

    /// Reaps the child if it has ended, without waiting; the raw wait status, or nil while it runs.
    private func poll() -> Int32? {
        waitStatus.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            var waited: pid_t
            repeat { waited = waitpid(processIdentifier, &raw, WNOHANG) } while waited < 0 && errno == EINTR
            if waited == processIdentifier {
                status = raw
            } else if waited < 0 {
                // ECHILD: somebody else reaped it; it has ended, how is unknown.
                status = 0xff << 8
            }
            return status
        }
    }

    /// Whether the child has ended (and been reaped).
    public var hasEnded: Bool { poll() != nil }

    /// Whether the child still runs.
    public var isRunning: Bool { poll() == nil }

    /// Its exit status, or 128 + the signal that ended it, as a shell reports it; nil while it runs.
    public var exitStatus: Int32? {
        poll().map { raw in
            // WIFEXITED / WEXITSTATUS / WTERMSIG are C macros Swift cannot see.
            let signal = raw & 0x7f
            return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        }
    }

    /// The exit status, or 128 + the signal; traps while the child runs (call after `waitUntilExit`).
    public var terminationStatus: Int32 {
        guard let status = exitStatus else { preconditionFailure("\(executable) is still running") }
        return status
    }

    /// Sends `signal` unless the child has been reaped (its pid may then be another process's).
    public func signal(_ number: Int32) {
        waitStatus.withLock { status in
            if status == nil { _ = kill(processIdentifier, number) }
        }
    }

    /// Asks the child to end (SIGTERM).
    public func terminate() { signal(SIGTERM) }

    /// Waits up to `timeout` seconds for the child to end; its status as `exitStatus` gives it,
    /// or nil while it still runs. Polls (every 10 ms), so it never holds the lock while waiting.
    public func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = exitStatus { return status }
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    /// Waits for the child to end, however long that takes.
    public func waitUntilExit() {
        while !hasEnded { usleep(10_000) }
    }

    /// Ends the child: SIGTERM, SIGKILL after `grace` seconds, and waits until it is reaped.
    public func stop(grace: TimeInterval = 5) {
        terminate()
        if wait(timeout: grace) == nil {
            signal(SIGKILL)
            waitUntilExit()
        }
    }
}

/// Why a child could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    /// The error number posix_spawn answered.
    public let code: Int32
    /// What went wrong, for the test's failure message.
    public let description: String
}
