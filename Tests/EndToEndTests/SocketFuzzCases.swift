import AuthTestSupport
import Foundation

/// What a hostile or broken client might write on the socket: random bytes, truncated and
/// mutated requests, invalid UTF-8, deep nesting, huge numbers, duplicate ids, wrong types and
/// lines far over the limit. Each payload is what one connection sends before it half-closes.
struct SocketFuzzCases {
    let seeds: [Data]

    func next(_ random: inout SplitMix64) -> Data {
        let seed = seeds.randomElement(using: &random) ?? Data("{}".utf8)
        switch Int.random(in: 0..<11, using: &random) {
        case 0:
            return Data((0..<Int.random(in: 1...4096, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        case 1:
            return seed.prefix(Int.random(in: 0..<max(1, seed.count), using: &random)) + newline
        case 2:
            return mutated(seed, &random) + newline
        case 3:
            let bad: [[UInt8]] = [[0xFF, 0xFE], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0x80]]
            let text = String(decoding: seed, as: UTF8.self)
            guard let quote = text.lastIndex(of: "\"") else { return seed + newline }
            let offset = text.utf8.distance(from: text.utf8.startIndex, to: quote)
            return seed.prefix(offset) + Data(bad.randomElement(using: &random)!) + seed.dropFirst(offset) + newline
        case 4:
            let depth = Int.random(in: 100...30_000, using: &random)
            let (open, close) = Bool.random(using: &random) ? ("[", "]") : ("{\"a\":", "}")
            let inner = String(repeating: open, count: depth) + "1" + String(repeating: close, count: Bool.random(using: &random) ? depth : depth / 2)
            return Data(#"{"jsonrpc":"2.0","id":1,"method":"session.status","params":"#.utf8) + Data(inner.utf8) + Data("}\n".utf8)
        case 5:
            let numbers = ["1e400", "-1e400", "123456789012345678901234567890", "-0", "1.5e308", "9223372036854775808",
                           "-9223372036854775809", "0.0000000000000000000001", "NaN", "Infinity", "1E+2147483648"]
            let number = numbers.randomElement(using: &random)!
            let shapes = [#"{"jsonrpc":"2.0","id":\#(number),"method":"hello"}"#,
                          #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{"min_validity":\#(number)}}"#,
                          #"{"jsonrpc":"2.0","id":2,"method":"session.status","params":{"profile":\#(number)}}"#]
            return Data((shapes.randomElement(using: &random)! + "\n").utf8)
        case 6:
            let line = String(decoding: seeds.first { String(decoding: $0, as: UTF8.self).contains("session.token") } ?? seed, as: UTF8.self)
            return Data(String(repeating: line + "\n", count: Int.random(in: 2...50, using: &random)).utf8)
        case 7:
            let wrong = [#"{"jsonrpc":"2.0","id":1,"method":5}"#, #"{"jsonrpc":"2.0","id":{},"method":"hello"}"#,
                         #"{"jsonrpc":"2.0","id":[1],"method":"hello"}"#, #"{"jsonrpc":"2.0","id":true,"method":"hello"}"#,
                         #"{"jsonrpc":"1.0","id":1,"method":"hello"}"#, #"{"jsonrpc":2,"id":1,"method":"hello"}"#,
                         #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":[]}"#,
                         #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":"soon"}"#,
                         #"{"jsonrpc":"2.0","id":1,"method":"session.signInWithPassword","params":{"email":[],"password":{}}}"#,
                         #"{"jsonrpc":"2.0","id":1,"method":"oauth.begin","params":{"provider":null,"redirect_to":7}}"#,
                         #"{"jsonrpc":"2.0","id":null,"method":"hello"}"#, "null", "[]", "\"\"", "{}", "1", ""]
            return Data((wrong.randomElement(using: &random)! + "\n").utf8)
        case 8:
            // Mostly just past the 64 KiB limit; 1 MiB now and then (it is the bulk of the bytes,
            // and the suite shares the machine with every other test).
            let size = Int.random(in: 0..<16, using: &random) == 0 ? 1 << 20 : Int.random(in: 60_000...70_000, using: &random)
            return Data(repeating: UInt8(ascii: "a") + UInt8.random(in: 0..<26, using: &random), count: size) + newline
        case 9:
            let pieces = ["\r\n", "\n\n\n", "\0", " ", "\t", "\u{FEFF}", "\u{2028}"]
            return Data(pieces.randomElement(using: &random)!.utf8) + seed + Data(pieces.randomElement(using: &random)!.utf8) + newline
        default:
            // Valid requests, several on one connection: the daemon must answer each.
            return (0..<Int.random(in: 1...5, using: &random)).reduce(Data()) { data, _ in data + seeds.randomElement(using: &random)! + newline }
        }
    }

    private var newline: Data { Data("\n".utf8) }

    /// Flips, inserts, deletes or duplicates a few bytes.
    private func mutated(_ input: Data, _ random: inout SplitMix64) -> Data {
        var bytes = [UInt8](input)
        for _ in 0..<Int.random(in: 1...8, using: &random) where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: bytes[at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            case 1: bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
            case 2: bytes.remove(at: at)
            default: bytes.insert(contentsOf: bytes[at..<min(bytes.count, at + 16)], at: at)
            }
        }
        return Data(bytes)
    }
}
