import AuthProtocol
import AuthSocketServer
import FoundationEssentials

/// Binds method names to handlers. Each handler is registered through its `RPCMethod` type, so
/// parameters and results are checked by the compiler and a test can check every method is bound,
/// and with its `MethodAudience`, which `admission` checks before the handler runs.
///
/// Every request takes the same steps, whichever way it came: its parameters are decoded (on the
/// event loop by the method's hand-written codec, `HandWrittenLines`, when it has one and the
/// line its shape; otherwise by `RPCCodec`), validated (`ValidatedParameters`), let through by
/// `admission`, and answered. A method may also bind an
/// "answer now" beside its handler: the event loop then answers a request that needs no waiting
/// (a cached token, an app already let in) without a task, and hands every other one on, read
/// once, to the same async steps.
///
/// The generic steps (`bind`, `call`, `decode`, `encode`, `registerStreaming`) are compiled once,
/// not once per method: specialized for each method they were 200 KiB of the installed
/// daemon, to save a few metadata lookups on requests that then wait for a server or a keyring.
/// The "answer now" path, which serves cached tokens, stays specialized.
public struct MethodTable: Sendable {
    /// A bound handler: decodes the request, runs, and answers through the connection's outbox.
    public typealias Handler = @Sendable (RPCRequestEnvelope, ConnectionContext) async -> Void
    /// Lets a caller through for a method of `audience` on the named profile, or throws the error
    /// to answer (it may wait for the user's decision).
    public typealias Admission = @Sendable (MethodAudience, String?, ConnectionContext) async throws(RPCErrorObject) -> Void
    /// Whether `admission` would let a caller through at once, without waiting or refusing; when
    /// true, the request counts as let through (the gate notes it).
    public typealias ImmediateAdmission = @Sendable (MethodAudience, String?, ConnectionContext) -> Bool
    /// The profile a request of `audience` naming `profile` is for, decided once per request
    /// before admission and handed to the handler too: the default profile can change while a
    /// request waits to be let in, and the profile let in must be the profile served.
    public typealias ProfileResolution = @Sendable (MethodAudience, String?) -> String?
    /// What the event loop does with a line: nil when the line is not this method's in the
    /// hand-written codec's shape.
    typealias Immediate = @Sendable (UnsafeRawBufferPointer, ConnectionContext) -> ImmediateAnswer?

    private(set) var handlers: [String: Handler] = [:]
    private(set) var audiences: [String: MethodAudience] = [:]
    /// Each method's parameter type, for `RPCCodec.decodeRequest` to read params with the envelope.
    private(set) var parameterTypes: RPCCodec.ParameterTypes = [:]
    private var immediates: [Immediate] = []
    private let admission: Admission
    private let immediateAdmission: ImmediateAdmission
    private let resolveProfile: ProfileResolution

    /// Creates an empty table whose methods are guarded by `admission`; `immediateAdmission`
    /// guards the answers given at once; `resolveProfile` names the profile of each request.
    public init(admission: @escaping Admission, immediateAdmission: @escaping ImmediateAdmission = { _, _, _ in false },
                resolveProfile: @escaping ProfileResolution = { _, profile in profile }) {
        self.admission = admission
        self.immediateAdmission = immediateAdmission
        self.resolveProfile = resolveProfile
    }

    /// The names with a handler.
    public var methodNames: Set<String> { Set(handlers.keys) }

    /// Who may call `name`, if it is bound.
    public func audience(of name: String) -> MethodAudience? { audiences[name] }

    /// Binds `method`, callable by `audience`, to `body`, which returns the result or throws the
    /// error to answer.
    public mutating func register<M: RPCMethod>(_ method: M.Type, for audience: MethodAudience,
                                                _ body: @escaping @Sendable (M.Parameters, ConnectionContext) async throws(RPCErrorObject) -> M.Result) {
        _ = bind(M.self, for: audience, body)
    }

    /// Binds the line handler of `method` and returns the steps after decoding (`call`), for an
    /// "answer now" to hand a request on to.
    @_semantics("optimize.sil.specialize.generic.never")
    private mutating func bind<M: RPCMethod>(_ method: M.Type, for audience: MethodAudience,
                                             _ body: @escaping @Sendable (M.Parameters, ConnectionContext) async throws(RPCErrorObject) -> M.Result)
        -> @Sendable (RPCID?, M.Parameters, ConnectionContext) async -> Void {
        let resolveProfile = self.resolveProfile
        let call = Self.call(M.self, audience: audience, admission: admission, body)
        audiences[M.name] = audience
        parameterTypes[M.name] = M.Parameters.self
        handlers[M.name] = { envelope, connection in
            let parameters: M.Parameters
            do throws(RPCErrorObject) {
                parameters = Self.resolved(try Self.decode(M.Parameters.self, envelope), for: audience, by: resolveProfile)
                try Self.validate(parameters)
            } catch {
                if envelope.id != nil { connection.outbox.send(RPCCodec.encodeError(error, id: envelope.id)) }
                return
            }
            await call(envelope.id, parameters, connection)
        }
        return call
    }

    /// Binds `method` as `register` does, plus `now`: the result when it can be given at once
    /// without suspending (nil when the request needs `body`). The event loop asks `now` for
    /// requests in the hand-written codec's shape, after validation and before admission, and
    /// answers when `immediateAdmission` lets the caller through at once.
    public mutating func register<M: HandWrittenLines>(_ method: M.Type, for audience: MethodAudience,
                                                       now: @escaping @Sendable (M.Parameters, ConnectionContext) -> M.Result?,
                                                       _ body: @escaping @Sendable (M.Parameters, ConnectionContext) async throws(RPCErrorObject) -> M.Result) {
        let call = bind(M.self, for: audience, body)
        let immediateAdmission = self.immediateAdmission, resolveProfile = self.resolveProfile
        immediates.append { bytes, connection in
            guard let (id, read) = M.readRequest(bytes) else { return nil }
            let parameters = Self.resolved(read, for: audience, by: resolveProfile)
            do throws(RPCErrorObject) {
                try Self.validate(parameters)
            } catch {
                return .reply(Array(RPCCodec.encodeError(error, id: id)))
            }
            // Admission comes last: when it lets the caller through at once it notes the token
            // handed out, so nothing may fail after it.
            if let result = now(parameters, connection),
               let line = M.writeResult(result, id: id) ?? (try? RPCCodec.encodeResult(result, id: id)).map(Array.init),
               immediateAdmission(audience, parameters.profile, connection) {
                return .reply(line)
            }
            // Read, resolved and validated once: the async steps take it from here.
            return .later { await call(id, parameters, connection) }
        }
    }

    /// Binds `method`, callable by `audience`, to a body that answers by itself (used by
    /// subscriptions, whose acknowledgement must be ordered before the first event).
    @_semantics("optimize.sil.specialize.generic.never")
    public mutating func registerStreaming<M: RPCMethod>(_ method: M.Type, for audience: MethodAudience,
                                                         _ body: @escaping @Sendable (M.Parameters, RPCRequestEnvelope, ConnectionContext) async throws(RPCErrorObject) -> Void) {
        let admission = self.admission, resolveProfile = self.resolveProfile
        audiences[M.name] = audience
        parameterTypes[M.name] = M.Parameters.self
        handlers[M.name] = { envelope, connection in
            do throws(RPCErrorObject) {
                let parameters = Self.resolved(try Self.decode(M.Parameters.self, envelope), for: audience, by: resolveProfile)
                try Self.validate(parameters)
                try await admission(audience, parameters.profile, connection)
                try await body(parameters, envelope, connection)
            } catch {
                // A notification (no id) is never answered, not even with an error.
                if envelope.id != nil { connection.outbox.send(RPCCodec.encodeError(error, id: envelope.id)) }
            }
        }
    }

    /// The handler for `name`, if bound.
    public func handler(for name: String) -> Handler? { handlers[name] }

    /// What the event loop does with `line`: `.pass` unless a method bound with an "answer now"
    /// reads it.
    public func answerAtOnce(_ line: UnsafeRawBufferPointer, connection: ConnectionContext) -> ImmediateAnswer {
        for immediate in immediates {
            if let answer = immediate(line, connection) { return answer }
        }
        return .pass
    }

    /// `parameters` with the profile `resolve` names for a request of `audience`.
    private static func resolved<P: ProfileScoped>(_ parameters: P, for audience: MethodAudience, by resolve: ProfileResolution) -> P {
        var parameters = parameters
        parameters.profile = resolve(audience, parameters.profile)
        return parameters
    }

    /// The steps after decoding, resolving the profile and validating, the same for every way a
    /// request comes in: admission, the body, and the answer (none for a notification, which has
    /// no id).
    @_semantics("optimize.sil.specialize.generic.never")
    private static func call<M: RPCMethod>(_ method: M.Type, audience: MethodAudience, admission: @escaping Admission,
                                           _ body: @escaping @Sendable (M.Parameters, ConnectionContext) async throws(RPCErrorObject) -> M.Result)
        -> @Sendable (RPCID?, M.Parameters, ConnectionContext) async -> Void {
        { id, parameters, connection in
            let reply: Data
            do throws(RPCErrorObject) {
                try await admission(audience, parameters.profile, connection)
                let result = try await body(parameters, connection)
                reply = try encode(M.self, result, id: id)
            } catch {
                reply = RPCCodec.encodeError(error, id: id)
            }
            if id != nil { connection.outbox.send(reply) }
        }
    }

    @_semantics("optimize.sil.specialize.generic.never")
    private static func encode<M: RPCMethod>(_ method: M.Type, _ result: M.Result, id: RPCID?) throws(RPCErrorObject) -> Data {
        if let id, let lines = M.self as? any HandWrittenLines.Type, let line = lines.writeAnyResult(result, id: id) { return Data(line) }
        do { return try RPCCodec.encodeResult(result, id: id) } catch {
            throw RPCErrorObject(code: RPCErrorObject.internalErrorCode, message: "internal error: result could not be encoded")
        }
    }

    private static func validate<P>(_ parameters: P) throws(RPCErrorObject) {
        if let validated = parameters as? any ValidatedParameters { try validated.validate() }
    }

    /// The params read with the envelope (`RPCCodec.decodeRequest`), else read from the line now.
    @_semantics("optimize.sil.specialize.generic.never")
    private static func decode<P: Decodable>(_ type: P.Type, _ envelope: RPCRequestEnvelope) throws(RPCErrorObject) -> P {
        do {
            switch envelope.parameters {
            case .success(let parameters as P): return parameters
            case .failure(let error): throw error
            case .success, nil: return try RPCCodec.decodeParams(P.self, from: envelope.raw)
            }
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
