#if canImport(Glibc)
import Glibc
#endif

/// `authctl token` in its common forms (`token`, `token --profile NAME`), answered before
/// ArgumentParser, Foundation or a JSON decoder is touched: scripts run `$(authctl token)` many
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
        guard let request = request(for: arguments), let path = socketPath() else { return .notHandled }
        guard let line = exchange(request, at: path) else { return .notHandled }
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
        !name.isEmpty && name.utf8.count <= 128 && name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }

    /// `$AUTHD_SOCKET`, else `$XDG_RUNTIME_DIR/authd/authd.sock` (as `SocketPath.resolve`); nil
    /// leaves the other cases, and their error messages, to the ordinary path.
    private static func socketPath() -> String? {
        if let explicit = environment("AUTHD_SOCKET") { return explicit }
        return environment("XDG_RUNTIME_DIR").map { $0 + "/authd/authd.sock" }
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let string = String(cString: value)
        return string.isEmpty ? nil : string
    }

    /// Sends `request` and returns the first line of the answer, or nil on any failure.
    private static func exchange(_ request: [UInt8], at path: String) -> [UInt8]? {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let fits: Bool = withUnsafeMutableBytes(of: &address.sun_path) { raw in
            guard path.utf8.count < raw.count else { return false }
            raw.copyBytes(from: path.utf8)
            return true
        }
        guard fits else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { return nil }
        // The ordinary path's bound: a refresh, or an app approval, may take a while.
        var timeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let sent = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == request.count else { return nil }
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while line.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            if let end = buffer[0..<count].firstIndex(of: 0x0A) {
                line.append(contentsOf: buffer[0..<end])
                return line
            }
            line.append(contentsOf: buffer[0..<count])
        }
        return nil
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
        let isJWTCharacter: (UInt8) -> Bool = { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
        guard token.allSatisfy(isJWTCharacter), range(of: key, in: Array(line[end...])) == nil else { return nil }
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
