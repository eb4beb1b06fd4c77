import BlockingCalls
import CAuthdSystem
import FoundationGaps
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program started with `posix_spawn`, standard input from /dev/null, output and error the
/// daemon's: what Foundation's `Process` did for the sign-in starter, without Foundation.
final class SpawnedProcess: Sendable {
    /// The child's process id.
    let pid: pid_t
    /// Whether the child was reaped: its pid may then belong to another process, which
    /// `terminate` must not signal.
    private let reaped = Mutex(false)

    /// Starts `command[0]` (a path) with the rest as its arguments and exactly `environment`;
    /// nil when it could not start.
    init?(_ command: [String], environment: [String: String]) {
        guard let path = command.first else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        // Nothing of the daemon's but the standard descriptors: its socket, keyring connection
        // and pipes are not the terminal's (most are close-on-exec already; this makes it so).
        authd_spawn_close_from(&actions, 3)
        let arguments = command.map { strdup($0) } + [nil]
        let variables = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (arguments + variables).forEach { free($0) } }
        var child = pid_t()
        // A clean signal state in a process group of its own, as Foundation's Process gave.
        let spawned = CleanSpawnAttributes.with { posix_spawn(&child, path, &actions, $0, arguments, variables) }
        guard spawned == 0 else { return nil }
        pid = child
    }

    /// Waits for the process to end, on a thread of its own (waitpid blocks); its exit status,
    /// or 128 + the signal that ended it, as a shell reports it.
    func exitStatus() async -> Int32? {
        let pid = self.pid
        return await BlockingLane(name: "authd-child").run { () -> Int32? in
            // Waits without reaping, then reaps under the lock `terminate` takes, so that it
            // never signals a pid the kernel has handed on.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 {
                if errno != EINTR { return nil }
            }
            var status: Int32 = 0
            let waited = self.reaped.withLock { reaped in
                reaped = true
                return waitpid(pid, &status, 0)
            }
            guard waited == pid else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG are C macros Swift cannot see.
            let signal = status & 0x7f
            return signal == 0 ? (status >> 8) & 0xff : 128 + signal
        }
    }

    /// Asks the process to end (SIGTERM). Safe from any thread.
    func terminate() {
        reaped.withLock { if !$0 { _ = kill(pid, SIGTERM) } }
    }
}
