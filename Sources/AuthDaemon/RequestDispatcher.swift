import AuthCore
import AuthProtocol
import AuthSocketServer
import FoundationEssentials
import Logging

/// The daemon's side of the socket: parses each line, finds the method, runs it.
public struct RequestDispatcher: SocketRequestHandler {
    private let table: MethodTable
    private let registry: ProfileRegistry
    private let logger: Logger

    /// Creates a dispatcher serving the profiles in `registry`, with `apps` deciding which app
    /// gets tokens (by default every app of the user, as ssh-agent does).
    public init(registry: ProfileRegistry, apps: AppAccessGate? = nil, logger: Logger) {
        self.registry = registry
        self.logger = logger
        let apps = apps ?? AppAccessGate(policies: [:], file: nil, prompt: nil, deciders: [], logger: logger)
        self.table = DaemonMethods.table(registry: registry, apps: apps)
    }

    /// The method names bound (for tests).
    public var boundMethods: Set<String> { table.methodNames }

    /// Who may call `method` (for tests).
    public func audience(of method: String) -> MethodAudience? { table.audience(of: method) }

    /// Handles one line.
    public func handle(line: Data, connection: ConnectionContext) async {
        switch RPCCodec.decodeRequest(line, parameterTypes: table.parameterTypes) {
        case .failure(let rejection):
            logger.debug("rejected line", metadata: ["connection.id": "\(connection.id)", "rpc.error": "\(rejection.error.code)"])
            connection.outbox.send(RPCCodec.encodeError(rejection.error, id: rejection.id))
        case .success(let envelope):
            guard let handler = table.handler(for: envelope.method) else {
                if envelope.id != nil {
                    let error = RPCErrorObject(code: RPCErrorObject.methodNotFoundCode,
                                               message: "method not found: \(envelope.method.prefix(64)) (see authd-protocol(7))")
                    connection.outbox.send(RPCCodec.encodeError(error, id: envelope.id))
                }
                return
            }
            logger.trace("request", metadata: ["rpc.method": "\(envelope.method)", "client.pid": "\(connection.peer.pid)"])
            await handler(envelope, connection)
        }
    }

    /// Answers a request on the event loop when it needs no waiting (a cached token for an app
    /// already let in), or hands on the request read here; see `MethodTable.answerAtOnce`.
    public func answerAtOnce(line: UnsafeRawBufferPointer, connection: ConnectionContext) -> ImmediateAnswer {
        let answer = table.answerAtOnce(line, connection: connection)
        if case .reply = answer {
            logger.trace("request", metadata: ["rpc.method": "\(Methods.Token.name)", "client.pid": "\(connection.peer.pid)"])
        }
        return answer
    }

    /// Drops the connection's subscriptions.
    public func connectionClosed(_ connection: ConnectionContext) async {
        for session in registry.sessions { await session.unsubscribe(connection.id) }
    }
}
