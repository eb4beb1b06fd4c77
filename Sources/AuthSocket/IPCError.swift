/// Why talking to the daemon failed.
public enum IPCError: Error, Sendable, Equatable {
    /// Nothing listens on the socket.
    case daemonNotRunning(path: String)
    /// The daemon did not answer in time.
    case timedOut
    /// The daemon closed the connection.
    case closedByDaemon
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
        case .io(let detail): return "cannot talk to authd: \(detail)"
        }
    }
}
