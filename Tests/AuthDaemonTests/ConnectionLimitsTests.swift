import AuthdClient
import AuthProtocol
import AuthSocketServer
import AuthTestSupport
import Foundation
import Synchronization
import Testing

/// The limits that keep one client from hurting the others, on a real socket.
@Suite struct ConnectionLimitsTests {
    /// The reason of an error line with a null id (a connection notice).
    private func notice(_ line: [UInt8]?) -> String? {
        let message = object(line)
        guard message["id"] is NSNull, let error = message["error"] as? [String: Any] else { return nil }
        return (error["data"] as? [String: Any])?["reason"] as? String
    }

    @Test func oneConnectionPastTheMaximumIsToldBusyAndClosedAndAFreedSlotIsServedAgain() async throws {
        try await DaemonHarness.run(limits: ConnectionLimits(maxConnections: 3)) { daemon in
            try await offPool {
                // Each of the three is retried until it is really served.
                func served() throws -> LineConnection? {
                    try daemon.servedRaw(sending: Data("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.status\"}\n".utf8), seconds: 60) {
                        object($0)["id"] as? Int == 1
                    }
                }
                let held = [try served(), try served()]
                let third = try served()
                #expect(held.allSatisfy { $0 != nil } && third != nil)

                let fourth = try daemon.raw()
                fourth.setReadTimeout(20)
                let refusal = try fourth.readLine()
                #expect(notice(refusal) == "busy")
                #expect(String(decoding: refusal ?? [], as: UTF8.self).contains("maximum of 3 connections"))
                #expect(try fourth.readLine() == nil)

                third?.close()
                _ = held
                let freed = try served()
                #expect(freed != nil, "the closed connection's slot never came back")
                freed?.close()
            }
        }
    }

    /// Idle closes on the test's clock: each is seen to happen exactly at its time, however
    /// slowly a loaded machine connects (on the real clock, a subscriber sometimes did not
    /// subscribe within a 300 ms timeout and was rightly closed first).
    @Test func aQuietConnectionIsClosedWithANoticeAtItsTimeoutWhileASubscriberStaysOpen() async throws {
        let timers = ManualConnectionTimers()
        try await DaemonHarness.run(limits: ConnectionLimits(idleTimeout: .seconds(60)), timers: timers) { daemon in
            let subscriber = try await daemon.subscriber()
            defer { subscriber.close() }
            #expect(await timers.waitForTimers(1))
            let quiet = try daemon.raw()
            defer { quiet.close() }
            quiet.setReadTimeout(20)
            #expect(await timers.waitForTimers(2))
            // Each connection's first look is a timeout after its accept, and nothing closes before.
            #expect(timers.pending == [.seconds(60), .seconds(60)])
            await timers.advance(by: .seconds(60) - .nanoseconds(1))
            #expect(timers.pending == [.nanoseconds(1), .nanoseconds(1)])
            await timers.advance(by: .nanoseconds(1))
            #expect(try await offPool { notice(try quiet.readLine()) } == "idle_timeout")
            #expect(try await offPool { try quiet.readLine() } == nil)
            // The subscriber stays, and is looked at again a timeout later.
            #expect(timers.pending == [.seconds(60)])

            // A connection opened now is closed at its time too; by then the subscriber has been
            // quiet for two timeouts, and yet it gets the next event (a subscriber closed as idle
            // would read its idle notice first).
            let later = try daemon.raw()
            defer { later.close() }
            later.setReadTimeout(20)
            #expect(await timers.waitForTimers(2))
            await timers.advance(by: .seconds(60))
            #expect(try await offPool { notice(try later.readLine()) } == "idle_timeout")
            #expect(try await offPool { try later.readLine() } == nil)
            let line = try await offPool {
                _ = try daemon.connect().call(Methods.SignInWithPassword.self, .init(email: "a@example.com", password: "correct horse"))
                return try subscriber.readLine()
            }
            #expect((object(line)["params"] as? [String: Any])?["event"] as? String == "SIGNED_IN",
                    "\(line.map { String(decoding: $0, as: UTF8.self) } ?? "the connection was closed")")
        }
    }

    @Test func aConnectionIsClosedATimeoutAfterItsLastAnswerNotAfterItsAccept() async throws {
        let timers = ManualConnectionTimers()
        let observer = ConnectionObserver()
        try await DaemonHarness.run(limits: ConnectionLimits(idleTimeout: .seconds(60)), timers: timers, observer: observer) { daemon in
            let raw = try daemon.raw()
            defer { raw.close() }
            raw.setReadTimeout(20)
            #expect(await timers.waitForTimers(1))
            await timers.advance(by: .seconds(40))
            let answered = try await offPool {
                try raw.write(Data("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"hello\"}\n".utf8))
                return object(try raw.readLine())["id"] as? Int
            }
            #expect(answered == 1)
            #expect(await observer.waitUntilNoRequestInFlight())
            // At the first look, 60 s after the accept, it has been quiet for 20 s: it is looked at
            // again when the other 40 s are up, and closed then.
            await timers.advance(by: .seconds(20))
            #expect(timers.pending == [.seconds(40)])
            await timers.advance(by: .seconds(40) - .nanoseconds(1))
            #expect(timers.pending == [.nanoseconds(1)])
            await timers.advance(by: .nanoseconds(1))
            #expect(try await offPool { notice(try raw.readLine()) } == "idle_timeout")
        }
    }

    @Test func theClientLibraryOpensAConnectionAgainAfterAnIdleClose() async throws {
        let timers = ManualConnectionTimers()
        let observer = ConnectionObserver()
        try await DaemonHarness.run(limits: ConnectionLimits(idleTimeout: .seconds(60)), timers: timers, observer: observer) { daemon in
            let client = try await AuthdClient.connect(socketPath: daemon.socketPath, onWarning: { _ in })
            #expect(try await client.status().state == "signed_out")
            // The daemon closes the client's one connection as idle (the client never closes it).
            #expect(await timers.waitForTimers(1))
            #expect(await observer.waitUntilNoRequestInFlight())
            await timers.advance(by: .seconds(60))
            let idle = await observer.waitForClosed(1)
            #expect(idle.count == 1, "the idle connection was not closed")
            // Its idle notice is waiting on the old connection; the call goes out again on a new one.
            #expect(try await client.status().state == "signed_out")
            await client.close()
            // That new connection is a second one, which the client's close ends.
            let both = await observer.waitForClosed(2)
            #expect(both.count == 2 && Set(both).count == 2, "\(both)")
        }
    }

    @Test func aClientThatDoesNotReadIsDroppedWithAFinalErrorAndNobodyElseWaits() async throws {
        let limits = ConnectionLimits(maxQueuedBytes: 16 * 1024, dropGrace: .seconds(10))
        try await DaemonHarness.run(limits: limits) { daemon in
            try await offPool {
                let client = try daemon.connect()
                _ = try client.call(Methods.SignInWithPassword.self, .init(email: "a@example.com", password: "correct horse"))

                // Each subscribe is answered with an acknowledgement and an INITIAL_SESSION event:
                // far more output than the kernel's buffer, NIO's and the outbox hold together.
                let hog = try daemon.raw()
                hog.setReadTimeout(10)
                let subscribe = Data("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"events.subscribe\"}\n".utf8)
                // The daemon may cut it off before it has written them all.
                var written = 0
                while written < 4000, (try? hog.write(subscribe)) != nil { written += 1 }

                // Meanwhile the other client is served as usual.
                for _ in 0..<50 { #expect(try client.call(Methods.Token.self, .init()).accessToken.isEmpty == false) }

                var lines: [[UInt8]] = []
                while let line = try hog.readLine() { lines.append(line) }
                #expect(lines.count < 8000)   // dropped, not served in full
                #expect(notice(lines.last) == "too_slow")
                #expect(lines.dropLast().allSatisfy { notice($0) == nil })
            }
        }
    }

    @Test func aClientThatHalfClosesStillGetsItsAnswersThenTheConnectionEnds() async throws {
        try await DaemonHarness.run { daemon in
            try await offPool {
                let raw = try daemon.raw()
                raw.setReadTimeout(20)
                try raw.write(Data("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session.status\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"hello\"}\n".utf8))
                raw.finishWriting()
                let ids = Set([try raw.readLine(), try raw.readLine()].map { object($0)["id"] as? Int })
                #expect(ids == [1, 2])
                #expect(try raw.readLine() == nil)
            }
        }
    }
}
