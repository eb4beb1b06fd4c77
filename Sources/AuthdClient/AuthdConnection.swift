import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// A connection to the authd daemon: typed calls and the event stream.
///
/// Blocking and single-threaded by design (one caller at a time): it is what a CLI or a script
/// helper needs, and it starts without an event loop.
public final class AuthdConnection: @unchecked Sendable {
    // Unchecked: used by one caller at a time, like the `LineConnection` it wraps.
    private let connection: LineConnection
    private var nextID: Int64 = 0
    private var pendingEvents: [AuthEventMessage] = []

    /// The socket path in use.
    public let socketPath: String

    private init(connection: LineConnection, socketPath: String) {
        self.connection = connection
        self.socketPath = socketPath
    }

    /// Connects to the daemon at `socketPath` (default: `$AUTHD_SOCKET` or `$XDG_RUNTIME_DIR/authd/authd.sock`).
    ///
    /// - Throws: `.foreignDaemon` when a process of another user serves the socket (nothing is
    ///   sent to it), `.daemonUnavailable` when nothing does.
    public static func connect(socketPath: String? = nil) throws(AuthdError) -> AuthdConnection {
        let path: String
        do { path = try socketPath ?? SocketPath.resolve() } catch { throw .daemonUnavailable(error.readableDescription) }
        do {
            return AuthdConnection(connection: try LineConnection.connect(path: path), socketPath: path)
        } catch {
            if case .foreignServer(let path, let uid, let expectedUID) = error {
                throw .foreignDaemon(path: path, uid: uid, expectedUID: expectedUID)
            }
            throw .daemonUnavailable(error.readableDescription)
        }
    }

    /// Calls `method` and waits up to `timeout` seconds for its answer. Events that arrive in
    /// between are kept for `nextEvent()`.
    public func call<M: RPCMethod>(_ method: M.Type, _ parameters: M.Parameters, timeout: TimeInterval = 30) throws(AuthdError) -> M.Result {
        nextID += 1
        let id = RPCID.number(nextID)
        let request: [UInt8]
        if let lines = M.self as? any HandWrittenLines.Type, let line = lines.writeAnyRequest(parameters, id: id) {
            request = line
        } else {
            do { request = Array(try RPCCodec.encodeRequest(method: M.name, params: parameters, id: id)) } catch {
                throw .protocolError("request could not be encoded")
            }
        }
        connection.setReadTimeout(timeout)
        // A failed write is not the end: authd may have refused us (another user) and closed
        // before we wrote, and its reason, an error with a null id, is still waiting to be read
        // below. Without it, the read finds the connection closed.
        try? connection.write(request)
        while true {
            guard let line = try io({ () throws(IPCError) in try connection.readLine() }) else {
                throw .daemonUnavailable(IPCError.closedByDaemon.readableDescription)
            }
            switch try Self.meaning(of: line, answering: id, method) {
            case .answer(let result): return result
            case .event(let event): pendingEvents.append(event)
            case .other: continue
            }
        }
    }

    /// What one line read on a connection means to a caller waiting for the answer to `id`.
    public enum LineMeaning<Result> {
        /// The answer.
        case answer(Result)
        /// An event, to keep for `nextEvent()`.
        case event(AuthEventMessage)
        /// Something else (another request's answer, an unknown notification).
        case other
    }

    /// Interprets `line` as `call` does: an error answer (or a notice with a null id) throws.
    /// For callers that did their own I/O, such as `authctl token` given its front's answer.
    public static func meaning<M: RPCMethod>(of bytes: [UInt8], answering id: RPCID, _ method: M.Type) throws(AuthdError) -> LineMeaning<M.Result> {
        // The common answer to a method with a hand-written codec is read without a JSON decoder.
        if let lines = M.self as? any HandWrittenLines.Type, let result = lines.readAnyResult(bytes, answering: id) as? M.Result {
            return .answer(result)
        }
        let line = Data(bytes)
        let decoder = RPCCodec.makeDecoder()
        guard let probe = try? decoder.decode(RPCInboundProbe.self, from: line) else {
            throw .protocolError("authd sent a line that is not JSON")
        }
        if probe.id == nil, probe.method == AuthEventMessage.method {
            if let event = try? decoder.decode(RPCNotificationIn<AuthEventMessage>.self, from: line) { return .event(event.params) }
            return .other
        }
        guard probe.id == id || probe.id == nil else { return .other }
        guard let response = try? decoder.decode(RPCResponse<M.Result>.self, from: line) else {
            throw .protocolError("authd's answer to \(M.name) has an unexpected shape")
        }
        if let error = response.error { throw AuthdError(answer: error, isNotice: probe.id == nil) }
        guard let result = response.result else { throw .protocolError("authd's answer has neither result nor error") }
        return .answer(result)
    }

    /// Subscribes to events of `profile` (the default profile when nil). The first event is `INITIAL_SESSION`.
    public func subscribe(profile: String? = nil) throws(AuthdError) {
        _ = try call(Methods.Subscribe.self, ProfileParameters(profile: profile))
    }

    /// The next event; nil once the daemon has closed the connection.
    public func nextEvent() throws(AuthdError) -> AuthEventMessage? {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        connection.setReadTimeout(nil)
        while true {
            guard let line = try io({ () throws(IPCError) in try connection.readLine() }) else { return nil }
            if let notification = try? RPCCodec.makeDecoder().decode(RPCNotificationIn<AuthEventMessage>.self, from: Data(line)),
               notification.method == AuthEventMessage.method {
                return notification.params
            }
        }
    }

    /// Closes the connection.
    public func close() { connection.close() }

    /// Wakes a `nextEvent()` blocked on another thread, which then returns nil. The one call
    /// that may come from another thread: it only shuts the socket down.
    func interruptForStop() { connection.interrupt() }

    private func io<T>(_ body: () throws(IPCError) -> T) throws(AuthdError) -> T {
        do { return try body() } catch {
            if case .timedOut = error { throw .timedOut }
            throw .daemonUnavailable(error.readableDescription)
        }
    }
}

/// An inbound notification.
struct RPCNotificationIn<P: Decodable>: Decodable {
    var method: String
    var params: P
}
