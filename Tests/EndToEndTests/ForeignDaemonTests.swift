import AuthTestSupport
import AuthdClient
import Foundation
import Testing

/// Clients check who serves the socket (`SO_PEERCRED`) before they write a byte: a "daemon" run
/// by another user, listening where authd's socket is expected, is sent no password, no request,
/// nothing, by authctl's front, authctl-full and the Swift library alike.
@Suite(.enabled(if: getuid() == 0, "needs root to serve a socket as another user"))
struct ForeignDaemonTests {
    @Test func authctlSendsNothingToAServerOfAnotherUser() async throws {
        try await offPool {
            let server = try ForeignServer(name: "authctl")
            defer { server.stop() }
            var environment = ProcessInfo.processInfo.environment
            environment["AUTHD_SOCKET"] = server.socketPath

            let login = try runCommand(Binaries.path("authctl"), ["login", "--email", "foreign@example.com", "--password-stdin"],
                                       environment: environment, input: "foreign-password-1\n", timeout: 30)
            #expect(login.status == 1, "\(login.stderr)")
            #expect(login.stderr.contains("is served by a process of uid \(ForeignServer.uid), not by you (uid \(getuid()))"), "\(login.stderr)")
            #expect(login.stderr.contains("nothing was sent"))
            // `token` goes through the front first, which connects on its own, then authctl-full.
            let token = try runCommand(Binaries.path("authctl"), ["token"], environment: environment, timeout: 30)
            #expect(token.status == 1, "\(token.stderr)")
            #expect(token.stdout.isEmpty)
            #expect(try runCommand(Binaries.path("authctl"), ["status"], environment: environment, timeout: 30).status == 1)

            let connections = server.connections(atLeast: 4)
            #expect(connections.count >= 4, "the clients did not reach the server: \(connections)")
            #expect(connections.allSatisfy { $0 == 0 }, "bytes the server received, per connection: \(connections)")
        }
    }

    @Test func theSwiftLibrarySendsNothingToAServerOfAnotherUser() async throws {
        let server = try await offPool { try ForeignServer(name: "library") }
        defer { server.stop() }
        do {
            _ = try await AuthdClient.connect(socketPath: server.socketPath)
            Issue.record("connected to another user's server")
        } catch {
            #expect(error == .foreignDaemon(path: server.socketPath, uid: ForeignServer.uid, expectedUID: getuid()), "\(error)")
            #expect(!error.isTransient)
            #expect(error.localizedDescription.contains("uid \(ForeignServer.uid)"))
        }
        #expect(throws: AuthdError.foreignDaemon(path: server.socketPath, uid: ForeignServer.uid, expectedUID: getuid())) {
            try AuthdConnection.connect(socketPath: server.socketPath)
        }
        let connections = try await offPool { server.connections(atLeast: 2) }
        #expect(connections.count >= 2, "the library did not reach the server: \(connections)")
        #expect(connections.allSatisfy { $0 == 0 }, "bytes the server received, per connection: \(connections)")
    }
}

/// A socket served by a process of uid 65534 in a directory root's clients can reach, which
/// counts the bytes each connection sends it.
final class ForeignServer: @unchecked Sendable {
    // Unchecked: used from one test at a time.
    static let uid: UInt32 = 65534

    let socketPath: String
    private let directory: URL
    private let log: String
    private let process: Spawned

    /// Accepts every connection and, when the client closes it (or after 5 s of silence), appends
    /// the number of bytes it sent to the log (the clients' tests share it).
    private static let program = (try? String(contentsOf: Binaries.repositoryRoot.appendingPathComponent("Tests/EndToEndTests/Helpers/counting-server.py"),
                                              encoding: .utf8)) ?? "raise SystemExit('counting-server.py is missing')"

    init(name: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-foreign-\(name)-\(UUID().uuidString.prefix(6))")
        let served = directory.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: served, withIntermediateDirectories: true)
        chmod(directory.path, 0o755)
        chown(served.path, ForeignServer.uid, ForeignServer.uid)
        socketPath = served.appendingPathComponent("authd.sock").path
        log = served.appendingPathComponent("received").path
        process = try Spawned("/usr/bin/setpriv", ["--reuid=\(ForeignServer.uid)", "--regid=\(ForeignServer.uid)", "--clear-groups",
                                                   "/usr/bin/python3", "-c", Self.program, socketPath, log],
                              environment: ["PATH": "/usr/bin:/bin"], in: directory, name: "foreign-server")
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socketPath) {
            guard Date() < deadline, !process.process.hasEnded else { throw StackError("the foreign server did not start: \(process.stderr)") }
            usleep(20_000)
        }
        var info = stat()
        guard stat(socketPath, &info) == 0, info.st_uid == ForeignServer.uid else { throw StackError("the socket is not uid \(ForeignServer.uid)'s") }
    }

    /// The bytes received on each connection closed so far, once there are `count` (or after 10 s).
    func connections(atLeast count: Int) -> [Int] {
        let deadline = Date().addingTimeInterval(10)
        var seen: [Int] = []
        repeat {
            seen = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int($0) }
            if seen.count >= count { break }
            usleep(50_000)
        } while Date() < deadline
        return seen
    }

    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
