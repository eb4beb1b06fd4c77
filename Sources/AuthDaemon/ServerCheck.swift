import AuthCore
import AuthProtocol

/// `daemon.checkServer` for one profile: the server is asked by `ServerCheckReuse`'s rules, so
/// that calls under way at once share one request and a recent answer is given again, whoever
/// calls and however often.
public actor ServerCheck {
    /// The check itself (`AccountOperations.checkServer`).
    private let probe: @Sendable () async -> Methods.CheckServer.Result
    /// Times the answers: a wall clock set back or forth must not keep an answer for longer.
    private let monotonic: any MonotonicClock
    private var rules = ServerCheckReuse<Methods.CheckServer.Result>()
    /// The check under way, which the calls that join it wait for. Set exactly while the rules
    /// say a check is under way: both change together, on this actor.
    private var underWay: Task<Methods.CheckServer.Result, Never>?

    /// Checks through `accounts`, timing answers on `monotonic`.
    public init(accounts: AccountOperations, monotonic: any MonotonicClock) {
        self.probe = { await accounts.checkServer() }
        self.monotonic = monotonic
    }

    /// What the server check finds: a recent answer, the one under way, or a new check's. A
    /// `fresh` call takes no recent answer (see `ServerCheckReuse.call`).
    public func result(fresh: Bool = false) async -> Methods.CheckServer.Result {
        switch rules.call(now: monotonic.seconds(), fresh: fresh) {
        case .answer(let answer):
            return answer
        case .join:
            if let underWay { return await underWay.value }
            // Not reached (see `underWay`); were it, asking once more is still an answer.
            return await probe()
        case .check:
            // A task of its own rather than this call's: a caller that hangs up (its task then
            // cancelled) must not cancel the request the others wait for. Every caller awaits
            // it, the one that started it included, so it never runs on unobserved.
            let task = Task { await self.checkNow() }
            underWay = task
            return await task.value
        }
    }

    /// Asks the server and records the answer before anyone waiting sees it, so that a call
    /// made as they resume is answered from it rather than checking again.
    private func checkNow() async -> Methods.CheckServer.Result {
        let answer = await probe()
        rules.finished(answer, now: monotonic.seconds())
        underWay = nil
        return answer
    }
}
