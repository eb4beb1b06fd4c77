@testable import AuthdClient
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// How the library meets a daemon of another protocol version: it warns on another major
/// version, reads answers carrying fields it does not know, and maps error reasons to types.
@Suite struct ProtocolVersionTests {
    @Test(arguments: [
        ("1.0", nil), ("1.7", nil),
        ("2.0", "newer than this client's 1.0: update the client library"),
        ("0.9", "older than this client's 1.0: update authd"),
        ("banana", "cannot read"),
    ] as [(String, String?)])
    func warningsOnlyForAnotherMajorVersion(_ daemon: String, _ expected: String?) {
        let warning = ProtocolCompatibility.warning(daemonVersion: daemon, clientVersion: "1.0")
        if let expected { #expect(warning?.contains(expected) == true, "\(warning ?? "nil")") } else { #expect(warning == nil) }
    }

    @Test func aNewerDaemonIsWarnedAboutAndItsUnknownFieldsAreIgnored() async throws {
        let daemon = try ScriptedDaemon { method in
            switch method {
            case "hello":
                return #"{"protocol_version":"2.1","daemon_version":"9.0.0","capabilities":["password","events","teleport"],"profiles":["default"],"default_profile":"default","motd":{"x":1}}"#
            case "session.token":
                return #"{"access_token":"header.payload.sig","token_type":"bearer","expires_at":1800000000,"expires_in":60,"scopes":["all"]}"#
            default:
                return nil
            }
        }
        defer { daemon.stop() }
        let warnings = Mutex<[String]>([])
        let client = try await AuthdClient.connect(socketPath: daemon.path, clientName: "version-test") { line in warnings.withLock { $0.append(line) } }
        #expect(warnings.withLock { $0 }.count == 1)
        #expect(warnings.withLock { $0 }.first?.contains("authd speaks protocol 2.1, newer than this client's 1.0") == true)
        #expect(client.daemon.capabilities.contains("teleport"))
        let token = try await client.token()
        #expect(token.value == "header.payload.sig")
        #expect(token.authorizationHeader == "Bearer header.payload.sig")
        #expect(token.expiresAt == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(!"\(token)".contains("header.payload.sig"))
    }

    @Test(arguments: [
        ("not_signed_in", AuthdError.notSignedIn("m")), ("offline", .offline("m")), ("server_error", .offline("m")),
        ("rate_limited", .offline("m")), ("access_denied", .accessDenied("m")), ("keyring_unavailable", .keyringUnavailable("m")),
        ("unknown_profile", .unknownProfile("m")), ("min_validity_too_long", .rejected(reason: "min_validity_too_long", message: "m")),
        ("from_the_future", .rejected(reason: "from_the_future", message: "m")),
        ("invalid_credentials", .signInRefused("m")), ("code_rejected", .signInRefused("m")), ("captcha_required", .signInRefused("m")),
        ("flow_expired", .browserSignInFailed("m")),
        // About this request only: the connection is fine (a notice without an id closes it).
        ("busy", .rejected(reason: "busy", message: "m")),
    ] as [(String, AuthdError)])
    func errorReasonsBecomeTypedErrors(_ reason: String, _ expected: AuthdError) async throws {
        let daemon = try ScriptedDaemon(errorReason: reason)
        defer { daemon.stop() }
        let client = try await AuthdClient.connect(socketPath: daemon.path)
        do { _ = try await client.token(); Issue.record("no error") } catch { #expect(error == expected) }
    }

    /// Every connection greets authd (reconnects and event streams too): the default handler
    /// prints a warning once per process, not once per connection.
    @Test func theDefaultHandlerPrintsEachWarningOncePerProcess() {
        let message = "authd speaks protocol 9.\(UUID().uuidString), newer than this client's 1.0"
        let printed = Mutex<[String]>([])
        for _ in 0..<3 { AuthdClient.printOnce(message) { line in printed.withLock { $0.append(line) } } }
        AuthdClient.printOnce(message + " (another)") { line in printed.withLock { $0.append(line) } }
        #expect(printed.withLock { $0 } == [message, message + " (another)"])
    }
}

/// A stand-in daemon on a real Unix socket that answers each request line from a script, on a
/// thread of its own. Only for protocol edge cases a real authd never produces.
final class ScriptedDaemon: @unchecked Sendable {
    // Unchecked: `listener` is written once in init; the thread owns everything else.
    let path: String
    private let listener: Int32
    private let requests = Mutex<[String]>([])

    /// The methods of the requests read so far, in order.
    var received: [String] { requests.withLock { $0 } }

    /// Answers `hello` normally and every other method with an error of `errorReason`.
    convenience init(errorReason: String) throws {
        try self.init(errorReason: errorReason) { method in method == "hello" ? ScriptedDaemon.hello : nil }
    }

    static let hello = #"{"protocol_version":"1.0","daemon_version":"0.1.0","capabilities":[],"profiles":["default"],"default_profile":"default"}"#

    /// `answer` gives the result JSON for a method, or nil for an error with `errorReason`. A
    /// request for `hangingUpOn` closes its connection unanswered, as an authd that stops does.
    init(errorReason: String = "internal", hangingUpOn: String? = nil, answer: @escaping @Sendable (String) -> String?) throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("scripted-\(UUID().uuidString.prefix(8)).sock").path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(listener, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        let socketFD = listener
        Thread { [self] in
            while true {
                let client = accept(socketFD, nil, nil)
                if client < 0 { return }
                Self.serve(client, errorReason: errorReason, hangingUpOn: hangingUpOn, answer: answer) { method in
                    requests.withLock { $0.append(method) }
                }
            }
        }.start()
    }

    private static func serve(_ client: Int32, errorReason: String, hangingUpOn: String?, answer: (String) -> String?,
                              record: (String) -> Void) {
        defer { close(client) }
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(client, &chunk, chunk.count, 0)
            if count <= 0 { return }
            buffer.append(contentsOf: chunk[0..<count])
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer.removeSubrange(buffer.startIndex...newline)
                guard let request = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                      let method = request["method"] as? String, let id = request["id"] as? Int else { continue }
                record(method)
                if method == hangingUpOn { return }
                let body = answer(method).map { #""result":\#($0)"# }
                    ?? #""error":{"code":-32000,"message":"m","data":{"reason":"\#(errorReason)"}}"#
                let reply = #"{"jsonrpc":"2.0","id":\#(id),\#(body)}"# + "\n"
                _ = reply.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }
}
