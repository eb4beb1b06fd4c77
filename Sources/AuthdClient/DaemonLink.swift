import AuthProtocol
import FoundationEssentials

/// Opens connections to authd and greets it with `hello`, checking the protocol version.
struct DaemonGreeter: Sendable {
    /// The socket path.
    let socketPath: String
    /// The display name sent in `hello` (identity itself comes from the kernel, not from this).
    let clientName: String
    /// Where protocol warnings go.
    let warn: @Sendable (String) -> Void

    /// Connects and says hello; the answer tells the protocol version, capabilities and profiles.
    func open() throws(AuthdError) -> (AuthdConnection, Methods.Hello.Result) {
        let connection: AuthdConnection
        connection = try AuthdConnection.connect(socketPath: socketPath)
        do {
            let hello = try connection.call(Methods.Hello.self, .init(client: clientName), timeout: 15)
            if let warning = ProtocolCompatibility.warning(daemonVersion: hello.protocolVersion) { warn(warning) }
            return (connection, hello)
        } catch {
            connection.close()
            throw error
        }
    }
}

/// The request connection of an `AuthdClient`. Used only on the client's lane, one call at a time.
final class DaemonLink: @unchecked Sendable {
    // Unchecked: confined to the client's BlockingLane thread.
    private let greeter: DaemonGreeter
    private let onHello: @Sendable (Methods.Hello.Result) -> Void
    private var connection: AuthdConnection?

    init(greeter: DaemonGreeter, onHello: @escaping @Sendable (Methods.Hello.Result) -> Void) {
        self.greeter = greeter
        self.onHello = onHello
    }

    /// Opens the connection if there is none.
    @discardableResult
    func ensureOpen() throws(AuthdError) -> AuthdConnection {
        if let connection { return connection }
        let (opened, hello) = try greeter.open()
        onHello(hello)
        connection = opened
        return opened
    }

    /// Calls `method`. A connection that broke since its last use (authd restarted) is replaced
    /// once and the call sent again, if the method is safe to repeat (`RPCMethod.isSafeToRepeat`).
    /// One that is not goes on a connection opened for it: one idle since its last use may have
    /// broken unseen, and a call lost with it could be neither sent again nor told apart from
    /// one authd carried out.
    func call<M: RPCMethod>(_ method: M.Type, _ parameters: M.Parameters, timeout: TimeInterval) throws(AuthdError) -> M.Result {
        if !M.isSafeToRepeat { close() }
        let reused = connection != nil
        let current = try ensureOpen()
        do {
            return try current.call(method, parameters, timeout: timeout)
        } catch {
            switch error {
            case .daemonUnavailable where reused && M.isSafeToRepeat:
                close()
                let fresh = try ensureOpen()
                do { return try fresh.call(method, parameters, timeout: timeout) } catch {
                    close()
                    throw error
                }
            case .daemonUnavailable, .timedOut, .protocolError, .foreignDaemon:
                // The connection is in an unknown state; the next call starts afresh.
                close()
                throw error
            default:
                // authd answered: the connection is fine.
                throw error
            }
        }
    }

    /// Closes the connection; the next call opens a new one.
    func close() {
        connection?.close()
        connection = nil
    }
}
