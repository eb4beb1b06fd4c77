import FoundationEssentials

/// Encodes and decodes JSON-RPC 2.0 lines. One JSON object per line, UTF-8, no embedded newline.
public enum RPCCodec {
    /// The parameter types of the methods served, by name: `decodeRequest` decodes a request's
    /// params with its method's type in the same pass that reads the envelope.
    public typealias ParameterTypes = [String: any (Decodable & Sendable).Type]

    private static let parameterTypesKey = CodingUserInfoKey(rawValue: "authd.parameterTypes")!

    private struct Envelope: Decodable {
        var jsonrpc: String?
        var id: RPCID?
        var method: String?
        var hasID: Bool
        /// The params, decoded with the type `parameterTypesKey` names for the method; nil when
        /// no type was given for it.
        var parameters: Result<any Sendable, any Error>?

        enum CodingKeys: String, CodingKey { case jsonrpc, id, method, params }

        init(from decoder: Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            jsonrpc = try? container.decode(String.self, forKey: .jsonrpc)
            hasID = container.contains(.id)
            id = try? container.decode(RPCID.self, forKey: .id)
            method = try? container.decode(String.self, forKey: .method)
            if let method, let types = decoder.userInfo[RPCCodec.parameterTypesKey] as? ParameterTypes, let type = types[method] {
                parameters = Result { try Self.params(type, in: container) }
            }
        }

        /// The params as `P`; absent or null params decode as `{}`.
        private static func params<P: Decodable & Sendable>(_ type: P.Type, in container: KeyedDecodingContainer<CodingKeys>) throws -> any Sendable {
            if let params = try container.decodeIfPresent(P.self, forKey: .params) { return params }
            return try makeDecoder().decode(P.self, from: Data("{}".utf8))
        }
    }

    private struct ParamsCarrier<P: Decodable>: Decodable {
        var params: P?
    }

    /// A line that cannot be dispatched, with the id to answer under (nil when unreadable).
    public struct RPCRejection: Error, Sendable {
        /// The request id, when it could be read.
        public var id: RPCID?
        /// The error to answer with.
        public var error: RPCErrorObject
    }

    /// Reads the envelope of one line, or the error to answer (with the id when it could be read).
    public static func decodeEnvelope(_ line: Data) -> Result<RPCRequestEnvelope, RPCRejection> {
        decodeRequest(line, parameterTypes: [:])
    }

    /// Reads one line in one pass: the envelope and, when `parameterTypes` has a type for its
    /// method, its params (`RPCRequestEnvelope.parameters`); or the error to answer (with the id
    /// when it could be read).
    public static func decodeRequest(_ line: Data, parameterTypes: ParameterTypes) -> Result<RPCRequestEnvelope, RPCRejection> {
        let envelope: Envelope
        do {
            let decoder = makeDecoder()
            if !parameterTypes.isEmpty { decoder.userInfo[parameterTypesKey] = parameterTypes }
            envelope = try decoder.decode(Envelope.self, from: line)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            // The decoder's own verdict tells unparseable text from valid JSON of the wrong shape,
            // so the line is parsed once, not once per question.
            return .failure(RPCRejection(id: nil, error: RPCErrorObject(code: RPCErrorObject.parseErrorCode, message: "parse error: the line is not valid JSON")))
        } catch {
            return .failure(RPCRejection(id: nil, error: RPCErrorObject(code: RPCErrorObject.invalidRequestCode, message: "invalid request: expected a JSON-RPC 2.0 object")))
        }
        guard envelope.jsonrpc == "2.0", let method = envelope.method else {
            return .failure(RPCRejection(id: envelope.id, error: RPCErrorObject(code: RPCErrorObject.invalidRequestCode,
                                                         message: "invalid request: \"jsonrpc\" must be \"2.0\" and \"method\" a string")))
        }
        if envelope.hasID, envelope.id == nil {
            // "id": null or a value of the wrong type. Treated as a request we cannot answer by id.
            return .failure(RPCRejection(id: nil, error: RPCErrorObject(code: RPCErrorObject.invalidRequestCode, message: "invalid request: \"id\" must be a string or a whole number that fits in 64 bits")))
        }
        return .success(RPCRequestEnvelope(id: envelope.id, method: method, raw: line, parameters: envelope.parameters))
    }

    /// Decodes the `params` of a request for a method's parameter type; absent params decode as `{}`.
    public static func decodeParams<P: Decodable>(_ type: P.Type, from line: Data) throws -> P {
        let decoder = makeDecoder()
        if let params = try decoder.decode(ParamsCarrier<P>.self, from: line).params { return params }
        return try decoder.decode(P.self, from: Data("{}".utf8))
    }

    /// Encodes a successful response line (with the trailing newline).
    public static func encodeResult<R: Encodable>(_ result: R, id: RPCID?) throws -> Data {
        try line(ResultResponse(id: id, result: result))
    }

    /// Encodes an error response line (with the trailing newline).
    public static func encodeError(_ error: RPCErrorObject, id: RPCID?) -> Data {
        // Encoding a struct of strings and numbers cannot fail; fall back to a fixed line anyway.
        (try? line(ErrorResponse(id: id, error: error)))
            ?? Data("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":\"internal error\"}}\n".utf8)
    }

    /// Encodes a request line (with the trailing newline).
    public static func encodeRequest<P: Encodable>(method: String, params: P, id: RPCID) throws -> Data {
        try line(Request(id: id, method: method, params: params))
    }

    /// Encodes a notification line (with the trailing newline).
    public static func encodeNotification<P: Encodable & Sendable>(_ notification: RPCNotification<P>) throws -> Data {
        try line(notification)
    }

    /// A JSON encoder with the protocol's settings (sorted keys, so output is stable).
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A JSON decoder with the protocol's settings.
    public static func makeDecoder() -> JSONDecoder { JSONDecoder() }

    private static func line<T: Encodable>(_ value: T) throws -> Data {
        var data = try makeEncoder().encode(value)
        data.append(0x0A)
        return data
    }

    private struct Request<P: Encodable>: Encodable {
        let jsonrpc = "2.0"
        var id: RPCID
        var method: String
        var params: P
    }

    private struct ResultResponse<R: Encodable>: Encodable {
        var id: RPCID?
        var result: R
        enum CodingKeys: String, CodingKey { case jsonrpc, id, result }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("2.0", forKey: .jsonrpc)
            try container.encode(id, forKey: .id)
            try container.encode(result, forKey: .result)
        }
    }

    private struct ErrorResponse: Encodable {
        var id: RPCID?
        var error: RPCErrorObject
        enum CodingKeys: String, CodingKey { case jsonrpc, id, error }
        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("2.0", forKey: .jsonrpc)
            try container.encode(id, forKey: .id) // explicit null when unknown, as JSON-RPC requires
            try container.encode(error, forKey: .error)
        }
    }
}

/// A response line as a client reads it: either a result of type `R` or an error.
public struct RPCResponse<R: Decodable>: Decodable {
    /// The id the response answers.
    public var id: RPCID?
    /// The result, when the call succeeded.
    public var result: R?
    /// The error, when it failed.
    public var error: RPCErrorObject?
}

/// Just enough of an inbound line for a client to route it: a response (has `id`) or a notification.
public struct RPCInboundProbe: Decodable {
    /// The id of a response.
    public var id: RPCID?
    /// The method of a notification.
    public var method: String?
}
