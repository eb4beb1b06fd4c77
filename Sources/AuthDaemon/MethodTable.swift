import AuthProtocol
import AuthSocketServer
import Foundation

/// Binds method names to handlers. Each handler is registered through its `RPCMethod` type, so
/// parameters and results are checked by the compiler and a test can check every method is bound,
/// and with its `MethodAudience`, which `admission` checks before the handler runs.
public struct MethodTable: Sendable {
    /// A bound handler: decodes the request, runs, and answers through the connection's outbox.
    public typealias Handler = @Sendable (RPCRequestEnvelope, ConnectionContext) async -> Void
    /// Lets a caller through for a method of `audience` on the named profile, or throws the error
    /// to answer (it may wait for the user's decision).
    public typealias Admission = @Sendable (MethodAudience, String?, ConnectionContext) async throws(RPCErrorObject) -> Void

    private(set) var handlers: [String: Handler] = [:]
    private(set) var audiences: [String: MethodAudience] = [:]
    private let admission: Admission

    /// Creates an empty table whose methods are guarded by `admission`.
    public init(admission: @escaping Admission) {
        self.admission = admission
    }

    /// The names with a handler.
    public var methodNames: Set<String> { Set(handlers.keys) }

    /// Who may call `name`, if it is bound.
    public func audience(of name: String) -> MethodAudience? { audiences[name] }

    /// Binds `method`, callable by `audience`, to `body`, which returns the result or throws the
    /// error to answer.
    public mutating func register<M: RPCMethod>(_ method: M.Type, for audience: MethodAudience,
                                                _ body: @escaping @Sendable (M.Parameters, ConnectionContext) async throws(RPCErrorObject) -> M.Result) {
        let admission = self.admission
        audiences[M.name] = audience
        handlers[M.name] = { envelope, connection in
            let reply: Data
            do throws(RPCErrorObject) {
                let parameters = try Self.decode(M.Parameters.self, envelope)
                try await admission(audience, parameters.profile, connection)
                let result = try await body(parameters, connection)
                do { reply = try RPCCodec.encodeResult(result, id: envelope.id) } catch {
                    throw RPCErrorObject(code: RPCErrorObject.internalErrorCode, message: "internal error: result could not be encoded")
                }
            } catch {
                reply = RPCCodec.encodeError(error, id: envelope.id)
            }
            if envelope.id != nil { connection.outbox.send(reply) }
        }
    }

    /// Binds `method`, callable by `audience`, to a body that answers by itself (used by
    /// subscriptions, whose acknowledgement must be ordered before the first event).
    public mutating func registerStreaming<M: RPCMethod>(_ method: M.Type, for audience: MethodAudience,
                                                         _ body: @escaping @Sendable (M.Parameters, RPCRequestEnvelope, ConnectionContext) async throws(RPCErrorObject) -> Void) {
        let admission = self.admission
        audiences[M.name] = audience
        handlers[M.name] = { envelope, connection in
            do throws(RPCErrorObject) {
                let parameters = try Self.decode(M.Parameters.self, envelope)
                try await admission(audience, parameters.profile, connection)
                try await body(parameters, envelope, connection)
            } catch {
                connection.outbox.send(RPCCodec.encodeError(error, id: envelope.id))
            }
        }
    }

    /// The handler for `name`, if bound.
    public func handler(for name: String) -> Handler? { handlers[name] }

    private static func decode<P: Decodable>(_ type: P.Type, _ envelope: RPCRequestEnvelope) throws(RPCErrorObject) -> P {
        do {
            return try RPCCodec.decodeParams(P.self, from: envelope.raw)
        } catch {
            throw RPCErrorObject(code: RPCErrorObject.invalidParamsCode,
                                 message: "invalid params for \(envelope.method): \(ParameterErrorText.describe(error))")
        }
    }
}

/// Short descriptions of decoding errors that name the field but never echo a value.
enum ParameterErrorText {
    static func describe(_ error: Error) -> String {
        guard let error = error as? DecodingError else { return "not the expected object" }
        switch error {
        case .keyNotFound(let key, _): return "'\(key.stringValue)' is required"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).filter { $0 != "params" }.joined(separator: ".")
            return path.isEmpty ? "params must be an object" : "'\(path)' has the wrong type"
        case .dataCorrupted: return "not valid JSON"
        @unknown default: return "not the expected object"
        }
    }
}
