import AuthCore
import AuthProtocol
import AuthSocketServer
import Foundation
import Logging

/// The daemon's side of the socket: parses each line, finds the method, runs it.
public struct RequestDispatcher: SocketRequestHandler {
    private let table: MethodTable
    private let registry: ProfileRegistry
    private let apps: AppAccessGate
    private let logger: Logger

    /// Creates a dispatcher serving the profiles in `registry`, with `apps` deciding which app
    /// gets tokens (by default every app of the user, as ssh-agent does).
    public init(registry: ProfileRegistry, apps: AppAccessGate? = nil, logger: Logger) {
        self.registry = registry
        self.logger = logger
        let apps = apps ?? AppAccessGate(policies: [:], file: nil, prompt: nil, deciders: [], logger: logger)
        self.apps = apps
        self.table = DaemonMethods.table(registry: registry, apps: apps)
    }

    /// The method names bound (for tests).
    public var boundMethods: Set<String> { table.methodNames }

    /// Who may call `method` (for tests).
    public func audience(of method: String) -> MethodAudience? { table.audience(of: method) }

    /// Handles one line.
    public func handle(line: Data, connection: ConnectionContext) async {
        switch RPCCodec.decodeEnvelope(line) {
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

    /// Answers a token request on the event loop when the session holds a token valid for it
    /// and the app needs no asking: the common case, kept off actors and task switches
    /// (benchmark P1). Everything else, errors included, takes `handle`.
    public func answerAtOnce(line: UnsafeRawBufferPointer, connection: ConnectionContext) -> [UInt8]? {
        guard let (id, parameters) = Self.tokenRequest(in: line), let driver = try? registry.driver(parameters.profile) else { return nil }
        let minimum = parameters.minValidity ?? 0
        guard minimum >= 0, let token = driver.tokenAtOnce(validFor: TimeInterval(minimum)),
              apps.handOutAtOnce(to: connection.client, profile: driver.profile) else { return nil }
        logger.trace("request", metadata: ["rpc.method": "\(Methods.Token.name)", "client.pid": "\(connection.peer.pid)"])
        let result = DaemonMethods.tokenResult(token)
        return TokenAnswerLine.encode(result, id: id) ?? (try? RPCCodec.encodeResult(result, id: id)).map { Array($0) }
    }

    /// The id and parameters of a `session.token` request: read byte by byte where the line lies
    /// when it has the common shape, else decoded as `handle` would.
    private static func tokenRequest(in bytes: UnsafeRawBufferPointer) -> (RPCID, Methods.Token.Parameters)? {
        if let request = TokenRequestLine(bytes: bytes) { return (request.id, request.parameters) }
        // A byte search before copying and decoding: any other method would be decoded twice,
        // here and in `handle`.
        guard bytes.firstRange(of: tokenMethodName) != nil else { return nil }
        let line = Data(bytes)
        guard case .success(let envelope) = RPCCodec.decodeEnvelope(line), envelope.method == Methods.Token.name, let id = envelope.id,
              let parameters = try? RPCCodec.decodeParams(Methods.Token.Parameters.self, from: envelope.raw) else { return nil }
        return (id, parameters)
    }

    private static let tokenMethodName = Array(Methods.Token.name.utf8)

    /// Drops the connection's subscriptions.
    public func connectionClosed(_ connection: ConnectionContext) async {
        for driver in registry.drivers { await driver.unsubscribe(connection.id) }
    }
}

/// The profiles the daemon serves and their drivers.
public struct ProfileRegistry: Sendable {
    /// Drivers by profile name.
    public let byName: [String: SessionDriver]
    /// The profile used when a request names none.
    public let defaultProfile: String

    /// Creates a registry.
    public init(drivers: [SessionDriver], defaultProfile: String) {
        self.byName = Dictionary(uniqueKeysWithValues: drivers.map { ($0.profile, $0) })
        self.defaultProfile = defaultProfile
    }

    /// Every driver, in name order.
    public var drivers: [SessionDriver] { byName.keys.sorted().compactMap { byName[$0] } }

    /// The driver for `name` (or the default), or the error to answer.
    public func driver(_ name: String?) throws(RPCErrorObject) -> SessionDriver {
        let wanted = name ?? defaultProfile
        guard let driver = byName[wanted] else {
            throw .application(.unknownProfile, "no profile named '\(wanted.prefix(64))'; configured: \(byName.keys.sorted().joined(separator: ", "))")
        }
        return driver
    }
}
