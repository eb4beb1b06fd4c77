import AuthIPC
import Foundation

/// `authctl token` in its common forms (`token`, `token --profile NAME`), answered before
/// ArgumentParser or a JSON decoder is touched: scripts run `$(authctl token)` many
/// times, and start-up is most of its cost (benchmark P2). Anything unusual is left to the
/// ordinary path, and an answer that is not a plain token is interpreted by it, so errors,
/// messages and exit codes are the same either way.
enum QuickToken {
    /// What the attempt came to.
    enum Outcome {
        /// The token was printed.
        case printed
        /// authd answered, but not with a plain token: the ordinary path interprets this line.
        case answered([UInt8])
        /// Not tried, or no answer: the ordinary path runs the whole command.
        case notHandled
    }

    /// The request's id; the ordinary path interprets an answer with this id.
    static let requestID = 1

    /// Tries `arguments` (without the program name).
    static func attempt(_ arguments: [String]) -> Outcome {
        guard let request = request(for: arguments), let line = exchange(request) else { return .notHandled }
        guard let token = plainToken(in: line) else { return .answered(line) }
        var output = token
        output.append(0x0A)
        let written = output.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        // A short or failed write (a closed pipe) is left to the ordinary path to report.
        return written == output.count ? .printed : .notHandled
    }

    /// The request line for the forms handled here; nil for any other command line.
    static func request(for arguments: [String]) -> [UInt8]? {
        var params = "{}"
        switch arguments.count {
        case 1 where arguments[0] == "token":
            break
        case 3 where arguments[0] == "token" && arguments[1] == "--profile" && isPlainName(arguments[2]):
            params = #"{"profile":"\#(arguments[2])"}"#
        default:
            return nil
        }
        return Array(#"{"jsonrpc":"2.0","id":\#(requestID),"method":"session.token","params":\#(params)}"#.utf8) + [0x0A]
    }

    /// Names that need no JSON escaping; others take the ordinary path.
    private static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 128 && name.utf8.allSatisfy(isPlain)
    }

    /// Letters, digits, `-`, `_` and `.`: what JWTs are made of, and profile names that need no
    /// escaping in JSON.
    private static func isPlain(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }

    /// Sends `request` to the socket `SocketPath` resolves and returns the first line of the
    /// answer, or nil on any failure (the ordinary path then says what went wrong).
    private static func exchange(_ request: [UInt8]) -> [UInt8]? {
        guard let path = try? SocketPath.resolve(), let connection = try? LineConnection.connect(path: path) else { return nil }
        defer { connection.close() }
        // The ordinary path's bound: a refresh, or an app approval, may take a while.
        connection.setReadTimeout(60)
        guard (try? connection.write(Data(request))) != nil, let line = try? connection.readLine() else { return nil }
        return Array(line)
    }

    /// The access token when `line` is a successful answer to our request holding exactly one
    /// token made of JWT characters; nil for anything else (errors, notices, odd shapes).
    static func plainToken(in line: [UInt8]) -> [UInt8]? {
        let key = Array(#""access_token":""#.utf8)
        guard contains(line, Array(#""result":{"#.utf8)), !contains(line, Array(#""error""#.utf8)),
              contains(line, Array(#""id":\#(requestID),"#.utf8)) || contains(line, Array(#""id":\#(requestID)}"#.utf8)),
              let start = range(of: key, in: line)?.upperBound else { return nil }
        guard let end = line[start...].firstIndex(of: UInt8(ascii: "\"")), end > start else { return nil }
        let token = Array(line[start..<end])
        guard token.allSatisfy(isPlain), range(of: key, in: Array(line[end...])) == nil else { return nil }
        return token
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool { range(of: needle, in: haystack) != nil }

    private static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }
}
