/// Why talking to the daemon failed.
public enum IPCError: Error, Sendable, Equatable {
    /// Nothing listens on the socket.
    case daemonNotRunning(path: String)
    /// The daemon did not answer in time.
    case timedOut
    /// The daemon closed the connection.
    case closedByDaemon
    /// The socket is served by a process of another user (`uid`), not by one of ours
    /// (`expectedUID`): it is not our authd, and nothing was sent to it.
    case foreignServer(path: String, uid: UInt32, expectedUID: UInt32)
    /// Any other socket error.
    case io(String)
}

extension IPCError: CustomStringConvertible {
    /// What happened and what to do.
    public var description: String {
        switch self {
        case .daemonNotRunning(let path):
            return "authd is not running (nothing listens on \(path)). Start it with 'systemctl --user enable --now authd.socket' (after 'make install'), or run 'authd' in a terminal"
        case .timedOut: return "authd did not answer in time"
        case .closedByDaemon: return "authd closed the connection"
        case .foreignServer(let path, let uid, let expectedUID):
            return "\(path) is served by a process of uid \(uid), not by you (uid \(expectedUID)): it is not your authd, so nothing was sent to it. Check --socket, AUTHD_SOCKET and XDG_RUNTIME_DIR, and who created that socket"
        case .io(let detail): return "cannot talk to authd: \(detail)"
        }
    }
}
