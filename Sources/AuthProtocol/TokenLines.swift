/// A JSON-RPC request id: a whole number or a string.
public enum RPCID: Hashable, Sendable, CustomStringConvertible {
    /// A numeric id.
    case number(Int64)
    /// A string id.
    case string(String)

    /// The id as text, for logs.
    public var description: String {
        switch self {
        case .number(let number): return String(number)
        case .string(let string): return "\"\(string)\""
        }
    }
}

/// The parameters of a `session.token` request (`Methods.Token.Parameters`).
public struct TokenParameters: Sendable, Equatable {
    /// The profile; the default one when absent.
    public var profile: String?
    /// Seconds the token must stay valid; a refresh happens first when it would not.
    public var minValidity: Int?
    /// The assurance level the token must carry (`aal2`: a second factor verified); a session
    /// below it is answered `mfa_required`, never with a token.
    public var aal: String?

    /// Creates token parameters.
    public init(profile: String? = nil, minValidity: Int? = nil, aal: String? = nil) {
        self.profile = profile
        self.minValidity = minValidity
        self.aal = aal
    }
}

/// The answer to a `session.token` request (`Methods.Token.Result`).
public struct TokenResult: Sendable, Equatable {
    /// The bearer token (a JWT).
    public var accessToken: String
    /// Always "bearer".
    public var tokenType: String
    /// Expiry as Unix seconds on the daemon's clock.
    public var expiresAt: Int64
    /// Seconds left when the answer was made.
    public var expiresIn: Int64

    /// Creates a token result.
    public init(accessToken: String, tokenType: String = "bearer", expiresAt: Int64, expiresIn: Int64) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.expiresIn = expiresIn
    }
}

/// A `session.token` request line, written and read by hand: the one codec for the message that
/// scripts and apps send most, used by the client library and the daemon's event loop
/// (benchmarks P1–P3). (authctl's front, in C, reads the answer the same narrow way.)
///
/// The reader is deliberately narrow: one flat object with `jsonrpc` "2.0", an `id` (a whole
/// number, or a string of printable ASCII without escapes), `method` "session.token" and
/// optionally `params` with `profile` and `aal` (strings without escapes) and `min_validity` (a
/// whole number), in any order and with any JSON whitespace. Anything else (escapes, other keys,
/// keys given twice, nulls, fractions, invalid JSON) is nil, and the caller decodes the line with
/// the general JSON codec (`RPCCodec`), which remains the reference for what a line means. A line
/// of another method is given up as soon as its `method` is read, so that most of it is read
/// only once, by the general codec.
public struct TokenRequestLine: Equatable, Sendable {
    /// The method's wire name.
    public static let method = "session.token"

    /// The request id.
    public var id: RPCID
    /// The parameters, as the general decoder would read them.
    public var parameters: TokenParameters

    /// Creates a request.
    public init(id: RPCID, parameters: TokenParameters) {
        self.id = id
        self.parameters = parameters
    }

    /// Reads `line` (without its newline); nil when it is not in the narrow shape.
    public init?(_ line: [UInt8]) {
        guard let read = line.withUnsafeBytes({ Self.read($0) }) else { return nil }
        self = read
    }

    /// Reads the line in `bytes` (without its newline) where it lies, without copying it: the
    /// event loop hands over its receive buffer.
    public init?(bytes: UnsafeRawBufferPointer) {
        guard let read = Self.read(bytes) else { return nil }
        self = read
    }

    /// The line, newline included, with the keys in the order the general encoder writes them.
    public var encoded: [UInt8] {
        var line = Array(#"{"id":"#.utf8)
        WireText.append(id, to: &line)
        line.append(contentsOf: #","jsonrpc":"2.0","method":"session.token","params":{"#.utf8)
        if let aal = parameters.aal {
            line += Array((#""aal":"# + JSONText.quoted(aal)).utf8)
            if parameters.minValidity != nil || parameters.profile != nil { line.append(UInt8(ascii: ",")) }
        }
        if let minValidity = parameters.minValidity {
            line.append(contentsOf: #""min_validity":\#(minValidity)"#.utf8)
            if parameters.profile != nil { line.append(UInt8(ascii: ",")) }
        }
        if let profile = parameters.profile { line += Array((#""profile":"# + JSONText.quoted(profile)).utf8) }
        line.append(contentsOf: "}}\n".utf8)
        return line
    }

    private static func read(_ bytes: UnsafeRawBufferPointer) -> TokenRequestLine? {
        var reader = WireReader(bytes: bytes)
        var jsonrpc: Range<Int>?, method: Range<Int>?, id: RPCID?, params: TokenParameters?
        // Each key once: for a key given twice, the general decoder is the reference.
        let complete = reader.object { key, reader in
            if reader.holds(key, Keys.jsonrpc), jsonrpc == nil {
                jsonrpc = reader.plainString()
                return jsonrpc != nil
            } else if reader.holds(key, Keys.method), method == nil {
                method = reader.plainString()
                // Another method's line: give it up now, not after reading the rest of it.
                return method.map { reader.holds($0, Keys.tokenMethod) } ?? false
            } else if reader.holds(key, Keys.id), id == nil {
                id = reader.id()
                return id != nil
            } else if reader.holds(key, Keys.params), params == nil {
                params = reader.tokenParameters()
                return params != nil
            }
            return false
        }
        guard complete, reader.atEnd, let jsonrpc, reader.holds(jsonrpc, Keys.version), let method, reader.holds(method, Keys.tokenMethod),
              let id else { return nil }
        return TokenRequestLine(id: id, parameters: params ?? TokenParameters())
    }
}

/// The answer line to a `session.token` request, written and read by hand (see `TokenRequestLine`).
/// The writer writes byte for byte what the general encoder writes; the reader takes that shape,
/// in any key order and spacing, and leaves everything else (errors, escapes, other keys) to the
/// general decoder.
public enum TokenAnswerLine {
    /// The line (with its newline) answering request `id` with `result`; nil when a value would
    /// need escaping in JSON, and the caller then uses the general encoder.
    ///
    /// Written into one array sized up front: the token is most of the line.
    public static func encode(_ result: TokenResult, id: RPCID) -> [UInt8]? {
        var line: [UInt8] = []
        line.reserveCapacity(result.accessToken.utf8.count + result.tokenType.utf8.count + 160)
        // Keys in sorted order, as the protocol's encoder writes them.
        line.append(contentsOf: #"{"id":"#.utf8)
        if case .string(let string) = id, !WireText.isPlain(string) { return nil }
        WireText.append(id, to: &line)
        line.append(contentsOf: #","jsonrpc":"2.0","result":{"access_token":""#.utf8)
        guard WireText.appendPlain(result.accessToken, to: &line) else { return nil }
        line.append(contentsOf: #"","expires_at":"#.utf8)
        line.append(contentsOf: String(result.expiresAt).utf8)
        line.append(contentsOf: #","expires_in":"#.utf8)
        line.append(contentsOf: String(result.expiresIn).utf8)
        line.append(contentsOf: #","token_type":""#.utf8)
        guard WireText.appendPlain(result.tokenType, to: &line) else { return nil }
        line.append(contentsOf: "\"}}\n".utf8)
        return line
    }

    /// The result in `line` (without its newline) when it is a successful answer to request `id`
    /// in the narrow shape; nil for anything else, which the caller decodes the general way.
    public static func decode(_ line: [UInt8], answering id: RPCID) -> TokenResult? {
        line.withUnsafeBytes { bytes in
            var reader = WireReader(bytes: bytes)
            var version: Range<Int>?, answered: RPCID?, result: TokenResult?
            let complete = reader.object { key, reader in
                if reader.holds(key, Keys.jsonrpc), version == nil {
                    version = reader.plainString()
                    return version != nil
                } else if reader.holds(key, Keys.id), answered == nil {
                    answered = reader.id()
                    return answered != nil
                } else if reader.holds(key, Keys.result), result == nil {
                    result = reader.tokenResult()
                    return result != nil
                }
                return false
            }
            guard complete, reader.atEnd, let version, reader.holds(version, Keys.version), answered == id else { return nil }
            return result
        }
    }
}

/// The keys and fixed values the token lines use.
private enum Keys {
    static let jsonrpc = Array("jsonrpc".utf8), method = Array("method".utf8), id = Array("id".utf8), params = Array("params".utf8)
    static let profile = Array("profile".utf8), minValidity = Array("min_validity".utf8), aal = Array("aal".utf8)
    static let result = Array("result".utf8)
    static let accessToken = Array("access_token".utf8), tokenType = Array("token_type".utf8)
    static let expiresAt = Array("expires_at".utf8), expiresIn = Array("expires_in".utf8)
    static let version = Array("2.0".utf8), tokenMethod = Array(TokenRequestLine.method.utf8)
}

/// Writing values that need no escaping.
private enum WireText {
    /// Whether `text` is printable ASCII without a quote or backslash (written as is inside a
    /// JSON string). Reads the string's contiguous bytes in one pass without an early exit, which
    /// the compiler turns into vector instructions: a token is most of an answer line.
    static func isPlain(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isPlain($0) }
    }

    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var outside: UInt8 = 0
        for byte in bytes {
            // Below 0x20 or from 0x7F up wraps past 0x5E; then the quote and the backslash.
            outside |= (byte &- 0x20 > 0x5E ? 1 : 0) | (byte == UInt8(ascii: "\"") ? 1 : 0) | (byte == UInt8(ascii: "\\") ? 1 : 0)
        }
        return outside == 0
    }

    /// Appends `text` when it is plain; false, appending nothing, otherwise. One pass over the
    /// string's contiguous bytes, then one copy.
    static func appendPlain(_ text: String, to line: inout [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard isPlain(bytes) else { return false }
            line.append(contentsOf: bytes)
            return true
        }
    }

    /// Appends `id` as JSON; a string id must be plain (checked by the caller, or quoted here).
    static func append(_ id: RPCID, to line: inout [UInt8]) {
        switch id {
        case .number(let number): line.append(contentsOf: String(number).utf8)
        case .string(let string): line.append(contentsOf: JSONText.quoted(string).utf8)
        }
    }
}

/// A cursor over a line; every reading method returns nil (or false) at the first byte outside
/// the narrow shape.
private struct WireReader {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    /// Whether the bytes in `range` are `expected`.
    func holds(_ range: Range<Int>, _ expected: [UInt8]) -> Bool {
        range.count == expected.count && bytes[range].elementsEqual(expected)
    }

    var atEnd: Bool {
        mutating get {
            skipSpace()
            return index == bytes.count
        }
    }

    mutating func skipSpace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0D || bytes[index] == 0x0A { index += 1 }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    /// `{ "key": value, … }`, each value read by `member`, which returns false to give up.
    mutating func object(_ member: (_ key: Range<Int>, _ reader: inout WireReader) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        if take(UInt8(ascii: "}")) { return true }
        repeat {
            guard let key = plainString(), take(UInt8(ascii: ":")), member(key, &self) else { return false }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}"))
    }

    /// A string of printable ASCII without escapes: where its bytes are, without the quotes.
    mutating func plainString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            guard bytes[index] >= 0x20, bytes[index] < 0x7F, bytes[index] != UInt8(ascii: "\\") else { return nil }
            index += 1
        }
        guard index < bytes.count else { return nil }
        index += 1
        return start..<(index - 1)
    }

    /// A whole number in JSON's syntax (no leading zeros, no fraction or exponent) that fits in 64 bits.
    mutating func wholeNumber() -> Int64? {
        skipSpace()
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digits = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        guard index > digits, bytes[digits] != UInt8(ascii: "0") || index == digits + 1 else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") { return nil }
        return Int64(text(start..<index))
    }

    mutating func id() -> RPCID? {
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
            return plainString().map { .string(text($0)) }
        }
        return wholeNumber().map { .number($0) }
    }

    /// The bytes in `range` as a string.
    func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    mutating func tokenParameters() -> TokenParameters? {
        var profile: Range<Int>?, aal: Range<Int>?, minValidity: Int64?
        let complete = object { key, reader in
            if reader.holds(key, Keys.profile), profile == nil {
                profile = reader.plainString()
                return profile != nil
            } else if reader.holds(key, Keys.aal), aal == nil {
                aal = reader.plainString()
                return aal != nil
            } else if reader.holds(key, Keys.minValidity), minValidity == nil {
                minValidity = reader.wholeNumber()
                return minValidity != nil
            }
            return false
        }
        guard complete else { return nil }
        let seconds = minValidity.flatMap { Int(exactly: $0) }
        guard minValidity == nil || seconds != nil else { return nil }
        return TokenParameters(profile: profile.map(text), minValidity: seconds, aal: aal.map(text))
    }

    mutating func tokenResult() -> TokenResult? {
        var accessToken: Range<Int>?, tokenType: Range<Int>?, expiresAt: Int64?, expiresIn: Int64?
        let complete = object { key, reader in
            if reader.holds(key, Keys.accessToken), accessToken == nil {
                accessToken = reader.plainString()
                return accessToken != nil
            } else if reader.holds(key, Keys.tokenType), tokenType == nil {
                tokenType = reader.plainString()
                return tokenType != nil
            } else if reader.holds(key, Keys.expiresAt), expiresAt == nil {
                expiresAt = reader.wholeNumber()
                return expiresAt != nil
            } else if reader.holds(key, Keys.expiresIn), expiresIn == nil {
                expiresIn = reader.wholeNumber()
                return expiresIn != nil
            }
            return false
        }
        guard complete, let accessToken, !accessToken.isEmpty, let tokenType, let expiresAt, let expiresIn else { return nil }
        return TokenResult(accessToken: text(accessToken), tokenType: text(tokenType), expiresAt: expiresAt, expiresIn: expiresIn)
    }
}
