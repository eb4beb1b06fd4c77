import FoundationEssentials

// The general JSON codec's view of the token message, whose types live with the
// hand-written codec: the same snake_case fields, so that either codec reads what the other writes.

extension TokenParameters: Codable {
    enum CodingKeys: String, CodingKey { case profile, minValidity = "min_validity", aal }

    /// Decodes the parameters.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(profile: try container.decodeIfPresent(String.self, forKey: .profile),
                  minValidity: try container.decodeIfPresent(Int.self, forKey: .minValidity),
                  aal: try container.decodeIfPresent(String.self, forKey: .aal))
    }

    /// Encodes the parameters, leaving absent ones out.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(profile, forKey: .profile)
        try container.encodeIfPresent(minValidity, forKey: .minValidity)
        try container.encodeIfPresent(aal, forKey: .aal)
    }
}

extension TokenParameters: ValidatedParameters {
    /// The assurance levels a token request may ask for.
    public static let requestableLevels = ["aal1", "aal2"]

    /// `min_validity` must not be negative; `aal` must be `aal1` or `aal2`.
    public func validate() throws(RPCErrorObject) {
        if let minValidity, minValidity < 0 {
            throw RPCErrorObject(code: RPCErrorObject.invalidParamsCode, message: "invalid params: 'min_validity' must not be negative")
        }
        if let aal, !Self.requestableLevels.contains(aal) {
            throw RPCErrorObject(code: RPCErrorObject.invalidParamsCode, message: "invalid params: 'aal' must be aal1 or aal2")
        }
    }
}

extension TokenResult: Codable {
    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token", tokenType = "token_type", expiresAt = "expires_at", expiresIn = "expires_in"
    }

    /// Decodes the result.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(accessToken: try container.decode(String.self, forKey: .accessToken),
                  tokenType: try container.decode(String.self, forKey: .tokenType),
                  expiresAt: try container.decode(Int64.self, forKey: .expiresAt),
                  expiresIn: try container.decode(Int64.self, forKey: .expiresIn))
    }

    /// Encodes the result.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(accessToken, forKey: .accessToken)
        try container.encode(tokenType, forKey: .tokenType)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(expiresIn, forKey: .expiresIn)
    }
}

extension Methods.Token: HandWrittenLines {
    /// The request, read by `TokenRequestLine` when it has the common shape.
    public static func readRequest(_ bytes: UnsafeRawBufferPointer) -> (id: RPCID, parameters: Parameters)? {
        TokenRequestLine(bytes: bytes).map { ($0.id, $0.parameters) }
    }

    /// The request line by `TokenRequestLine`.
    public static func writeRequest(_ parameters: Parameters, id: RPCID) -> [UInt8]? {
        TokenRequestLine(id: id, parameters: parameters).encoded
    }

    /// The answer, read by `TokenAnswerLine` when it has the common shape.
    public static func readResult(_ line: [UInt8], answering id: RPCID) -> Result? {
        TokenAnswerLine.decode(line, answering: id)
    }

    /// The answer line by `TokenAnswerLine` (nil when a value needs escaping).
    public static func writeResult(_ result: Result, id: RPCID) -> [UInt8]? {
        TokenAnswerLine.encode(result, id: id)
    }
}
