import Foundation

/// The answer line to a `session.token` request, written byte for byte as `RPCCodec.encodeResult`
/// writes it but without `JSONEncoder`, which was a fifth of the daemon's work on the cached-token
/// path (benchmarks P1 and P3).
public enum TokenAnswerLine {
    /// The line (with its newline) answering request `id` with `result`; nil when a value would
    /// need escaping in JSON, and the caller then uses `RPCCodec`.
    public static func encode(_ result: Methods.Token.Result, id: RPCID) -> Data? {
        guard isPlain(result.accessToken), isPlain(result.tokenType) else { return nil }
        let idText: String
        switch id {
        case .number(let number):
            idText = String(number)
        case .string(let string):
            guard isPlain(string) else { return nil }
            idText = "\"" + string + "\""
        }
        // Keys in sorted order, as the protocol's encoder writes them.
        let line = #"{"id":"# + idText + #","jsonrpc":"2.0","result":{"access_token":""# + result.accessToken
            + #"","expires_at":"# + String(result.expiresAt) + #","expires_in":"# + String(result.expiresIn)
            + #","token_type":""# + result.tokenType + "\"}}\n"
        return Data(line.utf8)
    }

    /// Printable ASCII without a quote or backslash: written as is inside a JSON string.
    private static func isPlain(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
    }
}
