#if canImport(Glibc)
import Glibc
#endif

/// `posix_spawn` attributes for a child that starts clean, as Foundation's `Process` started
/// them: no blocked signals, every signal's default action, and a process group of its own. A
/// browser or terminal must not inherit a blocked mask or ignored signals from whoever started
/// us (Chromium waits forever for children whose SIGCHLD is blocked), nor the signals sent to
/// our group.
public enum CleanSpawnAttributes {
    /// Runs `body` with the attributes, which live only as long as the call.
    public static func with<Result>(_ body: (UnsafePointer<posix_spawnattr_t>) -> Result) -> Result {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        return withUnsafePointer(to: &attributes) { body($0) }
    }
}
