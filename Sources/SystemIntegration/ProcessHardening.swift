import CAuthdSystem
import FoundationEssentials
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the daemon's memory, which holds refresh tokens, to itself.
public enum ProcessHardening {
    /// No core dumps (`RLIMIT_CORE` 0) and not dumpable (`PR_SET_DUMPABLE` 0): other processes of
    /// the user can then neither ptrace the daemon nor read its `/proc/<pid>/mem` or `environ`.
    /// A failure is logged and the daemon goes on: it changes what a local attacker of the same
    /// user can read, not whether sessions work.
    public static func protectMemory(logger: Logger) {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &limit) != 0 {
            logger.warning("could not turn core dumps off", metadata: ["error": "\(String(cString: strerror(errno)))"])
        }
        let result = authd_make_undumpable()
        if result != 0 {
            logger.warning("could not mark the process undumpable", metadata: ["error": "\(String(cString: strerror(-result)))"])
        }
    }
}
