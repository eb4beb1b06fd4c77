import AuthProtocol
import AuthSocketServer
import AuthTestSupport
import Foundation
import SignInPageServer
import Testing

/// A request that only waits (for a sign-in page, for a browser) stops when its client hangs up,
/// and gives the connection's slot back, instead of holding it until the flow ends ten minutes
/// later; a client that only shuts down its writing side still gets its answer.
@Suite struct HungUpWaitTests {
    private func line(_ id: Int, _ method: String, _ params: String = "{}") -> Data {
        Data("{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\",\"params\":\(params)}\n".utf8)
    }

    /// A raw connection the daemon serves (not refused as busy), once a slot is free.
    private func servedConnection(_ daemon: DaemonHarness) throws -> LineConnection? {
        try daemon.servedRaw(sending: line(1, "hello")) { object($0)["result"] != nil }
    }

    /// Sends a wait for `flowID` on `raw`, then a `hello`, and reads the hello's answer: lines are
    /// read in order, so the wait is in the daemon's hands by then.
    private func startWaiting(on raw: LineConnection, for flowID: String) throws {
        try raw.write(line(2, Methods.WaitForInteractiveSignIn.name, "{\"flow_id\":\"\(flowID)\"}") + line(3, "hello"))
        #expect(object(try raw.readLine())["id"] as? Int == 3)
    }

    @Test func aClientThatHangsUpMidWaitGivesItsSlotBack() async throws {
        try await DaemonHarness.run(limits: ConnectionLimits(maxConnections: 1), pages: LoopbackSignInPageListening()) { daemon in
            try await offPool {
                let opener = try #require(try servedConnection(daemon))
                try opener.write(line(4, Methods.BeginInteractiveSignIn.name, "{\"open_browser\":false}"))
                let flowID = try #require((object(try opener.readLine())["result"] as? [String: Any])?["flow_id"] as? String)
                opener.close()

                let waiter = try #require(try servedConnection(daemon))
                try startWaiting(on: waiter, for: flowID)
                waiter.close()
                // The only slot is free again although the page is still open.
                let next = try #require(try servedConnection(daemon), "the hung-up wait still holds the connection's slot")
                // And the page it waited for is still open: only the wait ended.
                try next.write(line(5, Methods.CancelInteractiveSignIn.name, "{\"flow_id\":\"\(flowID)\"}"))
                #expect((object(try next.readLine())["result"] as? [String: Any])?["cancelled"] as? Bool == true)
                next.close()
            }
        }
    }

    @Test func aClientThatOnlyStopsWritingStillGetsTheAnswerItWaitsFor() async throws {
        try await DaemonHarness.run(pages: LoopbackSignInPageListening()) { daemon in
            try await offPool {
                let page = try daemon.connect().call(Methods.BeginInteractiveSignIn.self, .init(openBrowser: false))
                let waiter = try daemon.raw()
                waiter.setReadTimeout(30)
                try startWaiting(on: waiter, for: page.flowID)
                waiter.finishWriting()
                #expect(try daemon.connect().call(Methods.CancelInteractiveSignIn.self, .init(flowID: page.flowID)).cancelled)
                // The page's end, not a wait cut short ("authd is stopping").
                let error = object(try waiter.readLine())["error"] as? [String: Any]
                #expect((error?["message"] as? String)?.contains("cancelled, on the page or by the app") == true, "\(String(describing: error))")
                #expect(try waiter.readLine() == nil)
                waiter.close()
            }
        }
    }

    @Test(.timeLimit(.minutes(1))) func aWaitEndsWhenItsConnectionDoesAndOnlyThen() async throws {
        let hangUp = ConnectionHangUp()
        let (started, starting) = AsyncStream<Void>.makeStream()
        async let waited: Bool = hangUp.cancellingOnEnd {
            starting.finish()
            // Waits for as long as it is not cancelled, as a flow's waiter does.
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return true
        }
        for await _ in started {}
        // The body runs and the end is awaited; neither has finished.
        try #require(await eventually(every: .milliseconds(1)) { hangUp.waiting > 0 })
        #expect(!hangUp.hasEnded)
        hangUp.end()
        #expect(await waited)
        #expect(hangUp.hasEnded && hangUp.waiting == 0)
        // Once ended, a new wait is cut short at once.
        await hangUp.untilEnded()
    }

    @Test func aBodyThatFinishesFirstIsAnsweredAndStopsTheWaitForTheEnd() async {
        let hangUp = ConnectionHangUp()
        let (answered, answering) = AsyncStream<Void>.makeStream()
        // Off the test's task: a wait for the end that is never stopped fails the test, not the run.
        _ = Task {
            if await hangUp.cancellingOnEnd({ 42 }) == 42 { answering.finish() }
        }
        #expect(await ends(answered), "the wait for the end was not stopped when the body finished")
        #expect(hangUp.waiting == 0 && !hangUp.hasEnded)
    }

    /// Whether `finished` ends within `seconds` (a bound only a failing run reaches: a waiter
    /// that is never resumed then fails the test instead of hanging the run, since iterating a
    /// stream, unlike awaiting a task's value, stops when cancelled).
    private func ends(_ finished: AsyncStream<Void>, within seconds: Double = 30) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in finished {}
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    @Test func aCancelledWaiterForTheEndReturnsWithoutItWhetherItWaitedOrNot() async throws {
        let hangUp = ConnectionHangUp()
        // Cancelled while it waits: its cancellation handler resumes it.
        let (resumed, resuming) = AsyncStream<Void>.makeStream()
        let waiting = Task {
            await hangUp.untilEnded()
            resuming.finish()
        }
        try #require(await eventually(every: .milliseconds(1)) { hangUp.waiting > 0 })
        waiting.cancel()
        #expect(await ends(resumed), "a waiter cancelled while it waited was not resumed")
        #expect(hangUp.waiting == 0)
        // Cancelled before it waits: it does not start waiting.
        let (returned, returning) = AsyncStream<Void>.makeStream()
        _ = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await hangUp.untilEnded()
            returning.finish()
        }
        #expect(await ends(returned), "a waiter cancelled before it waited was not resumed")
        #expect(hangUp.waiting == 0 && !hangUp.hasEnded)
    }
}
