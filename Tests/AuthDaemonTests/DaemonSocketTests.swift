import AuthCore
import AuthDaemon
import AuthdClient
import AuthProtocol
import AuthTestSupport
import Foundation
import Synchronization
import Testing

/// The daemon's methods over a real Unix socket.
@Suite struct DaemonSocketTests {
    @Test func everyDeclaredMethodHasAHandler() async throws {
        try await DaemonHarness.run { daemon in
            #expect(daemon.dispatcher.boundMethods == Set(Methods.allNames))
        }
    }

    /// Only what touches no session or account is open to every program; the token is decided
    /// per app; apps are the user's tool's business; everything else needs an admitted app.
    @Test func everyMethodSaysWhoMayCallIt() async throws {
        try await DaemonHarness.run { daemon in
            let open: Set = [Methods.Hello.name, Methods.MakeNonce.name, Methods.CheckServer.name]
            let userTool: Set = [Methods.ListApps.name, Methods.DecideApp.name, Methods.SetDefaultProfile.name]
            for method in Methods.allNames {
                let expected: MethodAudience = open.contains(method) ? .everyone
                    : userTool.contains(method) ? .userTool
                    : method == Methods.Token.name ? .tokenTakers : .profileUsers
                #expect(daemon.dispatcher.audience(of: method) == expected, "\(method)")
            }
        }
    }

    /// A client that finds the socket's path connects at once: the daemon listens under a staging
    /// name and renames the socket into place (a plain bind makes the file a moment before listen,
    /// and a client polling for it, as scripts do after starting authd, is refused as if no daemon
    /// ran). A watcher polls the path every 50 µs, so it connects about as early as anything can
    /// (with no sleep at all it took a whole core from the daemon it waits for).
    /// The old window was microseconds wide and this test seldom caught it; what it always catches
    /// is a socket that never reaches its path, is not listening there, or leaves the staging name.
    @Test func theSocketAppearsOnlyOnceItListens() async throws {
        for _ in 0..<5 {
            let path = DaemonHarness.newSocketPath()
            let firstConnect = Mutex<String?>(nil) // "" once connected, else why not
            let watcher = Thread {
                let deadline = Date().addingTimeInterval(30)
                while access(path, F_OK) != 0, Date() < deadline { usleep(50) }
                let outcome: String
                do { try LineConnection.connect(path: path).close(); outcome = "" } catch { outcome = "\(error)" }
                firstConnect.withLock { $0 = outcome }
            }
            watcher.start()
            try await DaemonHarness.run(at: path) { _ in
                try #require(await eventually(every: .milliseconds(5)) { firstConnect.withLock { $0 } != nil })
                #expect(access(path + ".new", F_OK) != 0, "the staging name is left behind")
            }
            #expect(firstConnect.withLock { $0 } == "", "the first connect after the path appeared failed")
        }
    }

    @Test func signInServeTokensAndSignOut() async throws {
        try await DaemonHarness.run { daemon in
            try await offPool {
                let client = try daemon.connect()
                let hello = try client.call(Methods.Hello.self, .init(client: "test"))
                #expect(hello.protocolVersion == ProtocolVersion.current)
                #expect(hello.profiles == ["default"])

                #expect(throws: AuthdError.notSignedIn("not signed in: run 'authctl login'")) {
                    _ = try client.call(Methods.Token.self, .init())
                }
                do {
                    _ = try client.call(Methods.SignInWithPassword.self, .init(email: "a@example.com", password: "pw-not-this-one-7f3a"))
                    Issue.record("a wrong password signed in")
                } catch let AuthdError.signInRefused(message) {
                    #expect(message == "wrong email or password")
                    #expect(!message.contains("pw-not-this-one-7f3a"))
                }
                let status = try client.call(Methods.SignInWithPassword.self, .init(email: "a@example.com", password: "correct horse"))
                #expect(status.state == "signed_in")
                #expect(status.user?.email == "a@example.com")
                // Write-ahead: by the time sign-in answers, the session is in the store.
                #expect(daemon.store.stored("default")?.accessToken == "access-1")

                let token = try client.call(Methods.Token.self, .init(minValidity: 60))
                #expect(token.accessToken == "access-1")
                #expect(token.tokenType == "bearer")
                #expect(token.expiresIn > 3500)

                let signOut = try client.call(Methods.SignOut.self, .init(scope: "global"))
                #expect(signOut.serverConfirmed)
                #expect(signOut.status.state == "signed_out")
                #expect(signOut.status.signOutReason == "user_signed_out")
                #expect(daemon.api.signOutCalls == [.global])
                do {
                    _ = try client.call(Methods.Token.self, .init())
                    Issue.record("token after sign-out")
                } catch AuthdError.notSignedIn {
                }
            }
            // The delete goes through the store's serial queue: it lands a moment later.
            #expect(await eventually { daemon.store.stored("default") == nil })
            #expect(daemon.store.log.filter { $0.hasPrefix("save") }.count == 1)
        }
    }

    @Test func malformedLinesGetStandardErrorsAndTheConnectionStaysUsable() async throws {
        try await DaemonHarness.run { daemon in
            try await offPool {
                let raw = try daemon.raw()
                raw.setReadTimeout(20)
                let lines: [(String, Int)] = [
                    ("this is not json", -32700),
                    ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no.such.method\"}", -32601),
                    ("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session.token\",\"params\":{\"min_validity\":\"soon\"}}", -32602),
                    ("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session.token\",\"params\":{\"min_validity\":-5}}", -32602),
                    ("[\"not\",\"an\",\"object\"]", -32600),
                    ("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session.signOut\",\"params\":{\"scope\":\"everywhere\"}}", -32602),
                    ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"session.status\",\"params\":{\"profile\":\"nope\"}}", -32000),
                ]
                for (line, code) in lines {
                    try raw.write(Data((line + "\n").utf8))
                    #expect(errorCode(try raw.readLine()) == code, "\(line)")
                }
                // A notification (no id) gets no answer, not even an error: for an unknown method,
                // bad params, or a subscription (bad params, or its acknowledgement); the next
                // request still does.
                try raw.write(Data("{\"jsonrpc\":\"2.0\",\"method\":\"no.such.method\"}\n".utf8))
                try raw.write(Data("{\"jsonrpc\":\"2.0\",\"method\":\"session.signOut\",\"params\":{\"scope\":\"everywhere\"}}\n".utf8))
                try raw.write(Data("{\"jsonrpc\":\"2.0\",\"method\":\"events.subscribe\",\"params\":[]}\n".utf8))
                try raw.write(Data("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"hello\"}\n".utf8))
                let hello = object(try raw.readLine())
                #expect(hello["id"] as? Int == 9)
                #expect((hello["result"] as? [String: Any])?["protocol_version"] as? String == ProtocolVersion.current)
            }
        }
    }

    @Test func anOversizedLineIsRefusedAndClosedWhileOthersKeepWorking() async throws {
        try await DaemonHarness.run { daemon in
            try await offPool {
                let raw = try daemon.raw()
                raw.setReadTimeout(20)
                try? raw.write(Data(repeating: UInt8(ascii: "x"), count: 70 * 1024))
                let answer = try raw.readLine()
                #expect(errorCode(answer) == -32600)
                #expect(String(decoding: answer ?? [], as: UTF8.self).contains("longer than 65536 bytes"))
                #expect(try raw.readLine() == nil) // closed
                let other = try daemon.connect()
                #expect(try other.call(Methods.Status.self, .init()).state == "signed_out")
            }
        }
    }

    @Test func subscribersGetASnapshotThenChangesAndNeverATokenOrPassword() async throws {
        try await DaemonHarness.run { daemon in
            try await offPool {
                let watcher = try daemon.raw()
                watcher.setReadTimeout(20)
                try watcher.write(Data("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"events.subscribe\"}\n".utf8))
                let ack = try watcher.readLine()
                #expect((object(ack)["result"] as? [String: Any])?["subscribed"] as? Bool == true)
                let initial = object(try watcher.readLine())
                #expect((initial["params"] as? [String: Any])?["event"] as? String == "INITIAL_SESSION")

                let client = try daemon.connect()
                _ = try client.call(Methods.SignInWithPassword.self, .init(email: "a@example.com", password: "correct horse"))
                _ = try client.call(Methods.SignOut.self, .init())
                var events: [String] = []
                var text = ""
                while events.last != "SIGNED_OUT", let line = try watcher.readLine() {
                    text += String(decoding: line, as: UTF8.self)
                    if let name = (object(line)["params"] as? [String: Any])?["event"] as? String { events.append(name) }
                }
                #expect(events == ["SIGNED_IN", "SIGNED_OUT"])
                #expect(text.contains("\"reason\":\"user_signed_out\""))
                for secret in ["access-1", "refresh-1", "correct horse"] { #expect(!text.contains(secret)) }
            }
        }
    }
}

/// Shutting down while clients keep connecting (SIGTERM during a login storm).
@Suite struct ShutdownTests {
    @Test func shutdownClosesASubscribersConnection() async throws {
        let kept = Mutex<LineConnection?>(nil)
        try await DaemonHarness.run { daemon in
            let watcher = try await daemon.subscriber(timeout: 20)
            kept.withLock { $0 = watcher }
        }
        // The harness stopped the daemon as SIGTERM does: the subscriber's connection, which would
        // otherwise stay open for events, must see the end.
        let watcher = try #require(kept.withLock { $0 })
        #expect(try await offPool { try watcher.readLine() } == nil)
        watcher.close()
    }

    @Test func connectionsArrivingDuringShutdownDoNotCrashTheDaemon() async throws {
        let accepted = Mutex(0)
        let finished = Mutex(false)
        try await DaemonHarness.run { daemon in
            let path = daemon.socketPath
            // Keeps connecting while the harness shuts the daemon down; ends once the socket is gone.
            Thread {
                var failures = 0
                while failures < 20 {
                    if let connection = try? LineConnection.connect(path: path) {
                        connection.close()
                        accepted.withLock { $0 += 1 }
                    } else {
                        failures += 1
                    }
                }
                finished.withLock { $0 = true }
            }.start()
            // Shutdown begins only once connections are arriving, so that it meets them.
            _ = await eventually(within: 60, every: .milliseconds(5)) { accepted.withLock { $0 } > 0 }
        }
        // The process survived (a crash would have ended the run), the connections did arrive, and
        // once the daemon was gone they were refused rather than left hanging.
        #expect(await eventually(within: 60) { finished.withLock { $0 } }, "connections still succeeded a minute after the daemon stopped")
        #expect(accepted.withLock { $0 } > 0)
    }
}
