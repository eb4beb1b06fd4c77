import Foundation

/// A `session.token` request line in the shape clients send it, read byte by byte without a
/// JSON decoder: the cached-token answer is the hot path (benchmarks P1 and P3), and decoding
/// the envelope and the params with `JSONDecoder` was a third of the daemon's work for it.
///
/// Deliberately narrow: one flat object with `jsonrpc` "2.0", an `id` (a whole number, or a
/// string of printable ASCII without escapes), `method` "session.token" and optionally `params`
/// with `profile` (a string without escapes) and `min_validity` (a whole number), in any order
/// and with any JSON whitespace. Anything else (escapes, other keys, keys given twice, nulls,
/// fractions, invalid JSON) is nil, and the caller decodes the line the ordinary way, which
/// remains the reference for what a line means.
public struct TokenRequestLine: Equatable, Sendable {
    /// The request id.
    public var id: RPCID
    /// The parameters, as the ordinary decoder would read them.
    public var parameters: Methods.Token.Parameters

    /// Reads `line` (without its newline); nil when it is not in the narrow shape.
    public init?(_ line: Data) {
        guard let read = line.withUnsafeBytes({ Self.read($0) }) else { return nil }
        self = read
    }

    /// Reads the line in `bytes` (without its newline) where it lies, without copying it: the
    /// event loop hands over its receive buffer.
    public init?(bytes: UnsafeRawBufferPointer) {
        guard let read = Self.read(bytes) else { return nil }
        self = read
    }

    private init(id: RPCID, parameters: Methods.Token.Parameters) {
        self.id = id
        self.parameters = parameters
    }

    private static func read(_ bytes: UnsafeRawBufferPointer) -> TokenRequestLine? {
        var reader = Reader(bytes: bytes)
        var jsonrpc: Range<Int>?, method: Range<Int>?, id: RPCID?, params: Methods.Token.Parameters?
        // Each key once: for a key given twice, the ordinary decoder is the reference.
        let complete = reader.object { key, reader in
            if reader.holds(key, Keys.jsonrpc), jsonrpc == nil {
                jsonrpc = reader.plainString()
                return jsonrpc != nil
            } else if reader.holds(key, Keys.method), method == nil {
                method = reader.plainString()
                return method != nil
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
        return TokenRequestLine(id: id, parameters: params ?? Methods.Token.Parameters())
    }

    private enum Keys {
        static let jsonrpc = Array("jsonrpc".utf8), method = Array("method".utf8), id = Array("id".utf8), params = Array("params".utf8)
        static let profile = Array("profile".utf8), minValidity = Array("min_validity".utf8)
        static let version = Array("2.0".utf8), tokenMethod = Array(Methods.Token.name.utf8)
    }

    /// A cursor over the line; every reading method returns nil (or false) at the first byte
    /// outside the narrow shape.
    private struct Reader {
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
        mutating func object(_ member: (_ key: Range<Int>, _ reader: inout Reader) -> Bool) -> Bool {
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

        /// A whole number in JSON's syntax (no leading zeros, no fraction or exponent) that fits
        /// in 64 bits.
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

        mutating func tokenParameters() -> Methods.Token.Parameters? {
            var profile: Range<Int>?, minValidity: Int64?
            let complete = object { key, reader in
                if reader.holds(key, Keys.profile), profile == nil {
                    profile = reader.plainString()
                    return profile != nil
                } else if reader.holds(key, Keys.minValidity), minValidity == nil {
                    minValidity = reader.wholeNumber()
                    return minValidity != nil
                }
                return false
            }
            guard complete else { return nil }
            let seconds = minValidity.flatMap { Int(exactly: $0) }
            guard minValidity == nil || seconds != nil else { return nil }
            return Methods.Token.Parameters(profile: profile.map(text), minValidity: seconds)
        }
    }
}
