import Foundation

/// The answer line to a `session.token` request, written byte for byte as `RPCCodec.encodeResult`
/// writes it but without `JSONEncoder`, which was a fifth of the daemon's work on the cached-token
/// path (benchmarks P1 and P3).
public enum TokenAnswerLine {
    /// The line (with its newline) answering request `id` with `result`; nil when a value would
    /// need escaping in JSON, and the caller then uses `RPCCodec`.
    ///
    /// Written into one array sized up front: the token is most of the line, and building the
    /// line from strings cost an allocation and a copy per piece.
    public static func encode(_ result: Methods.Token.Result, id: RPCID) -> [UInt8]? {
        var line: [UInt8] = []
        line.reserveCapacity(result.accessToken.utf8.count + result.tokenType.utf8.count + 160)
        // Keys in sorted order, as the protocol's encoder writes them.
        append(#"{"id":"#, to: &line)
        switch id {
        case .number(let number):
            append(String(number), to: &line)
        case .string(let string):
            line.append(UInt8(ascii: "\""))
            guard appendPlain(string, to: &line) else { return nil }
            line.append(UInt8(ascii: "\""))
        }
        append(#","jsonrpc":"2.0","result":{"access_token":""#, to: &line)
        guard appendPlain(result.accessToken, to: &line) else { return nil }
        append(#"","expires_at":"#, to: &line)
        append(String(result.expiresAt), to: &line)
        append(#","expires_in":"#, to: &line)
        append(String(result.expiresIn), to: &line)
        append(#","token_type":""#, to: &line)
        guard appendPlain(result.tokenType, to: &line) else { return nil }
        append("\"}}\n", to: &line)
        return line
    }

    private static func append(_ text: String, to line: inout [UInt8]) {
        line.append(contentsOf: text.utf8)
    }

    /// Appends `text` when it is printable ASCII without a quote or backslash (written as is inside
    /// a JSON string); false, appending nothing, otherwise. Reads the string's contiguous bytes in
    /// one pass without an early exit, which the compiler turns into vector instructions: walking
    /// a token through `String.UTF8View` one index at a time was a twentieth of the daemon's time
    /// under load.
    private static func appendPlain(_ text: String, to line: inout [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var outside: UInt8 = 0
            for byte in bytes {
                // Below 0x20 or from 0x7F up wraps past 0x5E; then the quote and the backslash.
                outside |= (byte &- 0x20 > 0x5E ? 1 : 0) | (byte == UInt8(ascii: "\"") ? 1 : 0) | (byte == UInt8(ascii: "\\") ? 1 : 0)
            }
            guard outside == 0 else { return false }
            line.append(contentsOf: bytes)
            return true
        }
    }
}
