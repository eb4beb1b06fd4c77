import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Whether the kernel gives each connection a pidfd of its client (`SO_PEERPIDFD`, Linux 6.5 and
/// later), which `ClientIdentity` uses to check that the pid it read `/proc` for still named the
/// connected process afterwards. Without it a client that exits at once could have its pid taken
/// by another program and be identified as that one; authd still serves, so the user is told once
/// at start rather than finding out from a mistaken app decision.
public enum PeerPidfdSupport {
    /// `SO_PEERPIDFD`, which Glibc's headers may be too old to name.
    static let option: Int32 = 77

    /// Asks the kernel once, on a socket pair of this process's own: false only when it has no
    /// such option (ENOPROTOOPT), the one answer that makes every connection go without the check.
    /// Any other failure says nothing of the kernel, and each connection then finds out for itself.
    public static func probe() -> Bool {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else { return true }
        defer { close(pair[0]); close(pair[1]) }
        var pidfd: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(pair[0], SOL_SOCKET, option, &pidfd, &length) == 0 else { return errno != ENOPROTOOPT }
        if pidfd >= 0 { close(pidfd) }
        return true
    }

    /// The line to log at start when the check is off; nil when it is on.
    static func startNotice(available: Bool) -> Logger.Message? {
        if available { return nil }
        return "this kernel has no SO_PEERPIDFD (Linux 6.5 and later have it): the check that a client's pid was not taken by another process while authd identified it is off, and clients are told apart by pid alone"
    }

    /// Logs one line at notice level when the pid-reuse check is off; nothing when it is on.
    public static func logAtStart(_ logger: Logger, available: Bool = probe()) {
        guard let message = startNotice(available: available) else { return }
        logger.notice(message)
    }
}
