import AuthProtocol
import AuthSocketServer
import AuthTestSupport
import Foundation
import Testing

/// One program's share of connections (subscribed ones included, which are never idle-closed)
/// is bounded, so that it cannot leave the others `busy`: a second program is served while the
/// first is at its limit.
@Suite struct PerClientLimitsTests {
    /// A Python client (another executable than the test's) that sends `line` and prints the answer.
    private func otherProgram(_ socket: String, _ line: String) throws -> String {
        try runToEnd("/usr/bin/python3", ["-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(20)
            s.sendall(sys.argv[2].encode() + b"\\n")
            data = b""
            while not data.endswith(b"\\n"):
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print(data.decode().strip())
            """, socket, line]).stdout
    }

    private static let status = #"{"jsonrpc":"2.0","id":1,"method":"session.status"}"#

    @Test func aProgramAtItsShareOfConnectionsIsToldBusyWhileAnotherIsServed() async throws {
        try await DaemonHarness.run(limits: ConnectionLimits(maxConnections: 10, maxConnectionsPerClient: 2)) { daemon in
            try await offPool {
                func served() throws -> LineConnection? {
                    try daemon.servedRaw(sending: Data((Self.status + "\n").utf8)) { object($0)["id"] as? Int == 1 }
                }
                let held = [try served(), try served()]
                #expect(held.allSatisfy { $0 != nil })
                let third = try daemon.raw()
                third.setReadTimeout(20)
                let refusal = String(decoding: try third.readLine() ?? [], as: UTF8.self)
                #expect(refusal.contains(#""reason":"busy""#) && refusal.contains("this program has 2 connections"), "\(refusal)")
                // Another program still gets in.
                let other = try otherProgram(daemon.socketPath, Self.status)
                #expect(other.contains(#""result""#), "\(other)")
                _ = held
            }
        }
    }
}
