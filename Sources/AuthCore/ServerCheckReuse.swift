import FoundationEssentials

/// When `daemon.checkServer` asks the server, and when it answers with a check already made.
/// Pure: the caller asks the server and passes the time in (seconds of a monotonic clock).
///
/// The method is open to every program of the user, so without this rule any of them could make
/// authd send the project one request per call (200 calls made 200 requests in 1.2 s): authd
/// would lend its address and the user's project quota to a flood. Calls that come while a check
/// is under way wait for it and share its answer; an answer is reused for `reuseFor` after it
/// came. Whatever callers do, a profile's server then gets at most one check in flight and none
/// sooner than `reuseFor` after the last one ended.
public struct ServerCheckReuse<Answer: Sendable & Equatable>: Sendable, Equatable {
    /// What to do with a call.
    public enum Step: Sendable, Equatable {
        /// Answer with the last check's answer: it is recent enough.
        case answer(Answer)
        /// A check is under way: wait for it and answer with what it finds.
        case join
        /// Ask the server now, and pass its answer to `finished`; calls meanwhile `join`.
        case check
    }

    /// An answer and when it came.
    private struct Kept: Sendable, Equatable {
        var answer: Answer
        var at: TimeInterval
    }

    /// How long an answer is reused, in seconds.
    public let reuseFor: TimeInterval
    /// How many `fresh` calls may each start a check within `reuseFor`: authctl run in a loop (by
    /// a script, or by any program of the user, which may run authctl) makes the server see at
    /// most that many checks per `reuseFor` (one a second by default), while a person retyping
    /// `authctl doctor` always gets a new check.
    public let freshChecks: Int
    /// When the recent fresh checks began, oldest first; at most `freshChecks`.
    private var freshStarts: [TimeInterval] = []
    private var kept: Kept?
    private var checking = false

    /// No answer yet. `reuseFor` defaults to 5 s: a person running `authctl doctor` again after
    /// fixing the network waits no longer than it takes to retype the command, and neither
    /// reachability nor the clock skew (whole seconds) goes stale in 5 s; a program calling
    /// without pause gets authd to send 0.2 requests a second, which no project notices.
    public init(reuseFor: TimeInterval = 5, freshChecks: Int = 5) {
        self.reuseFor = reuseFor
        self.freshChecks = max(1, freshChecks)
    }

    /// What to do with a call made at `now`. `.check` marks a check as under way, so the caller
    /// that gets it must report its end through `finished`. A `fresh` call (the user's own
    /// `authctl doctor`, asking right after the network changed) is not given a kept answer
    /// unless `freshChecks` fresh checks began within the last `reuseFor`, and joins a check
    /// under way.
    public mutating func call(now: TimeInterval, fresh: Bool = false) -> Step {
        let window = reuseFor
        freshStarts.removeAll { now < $0 || now - $0 >= window }
        let keptCounts = !fresh || freshStarts.count >= freshChecks
        // A time before the answer's cannot come from a monotonic clock; should it, the answer
        // is not trusted to be recent.
        if keptCounts, let kept, now >= kept.at, now - kept.at < reuseFor { return .answer(kept.answer) }
        if checking { return .join }
        checking = true
        if fresh { freshStarts.append(now) }
        return .check
    }

    /// The check under way ended at `now` with `answer`, which is reused from then on: a failure
    /// as well, since a program that could make authd retry a failing server at once could flood it.
    public mutating func finished(_ answer: Answer, now: TimeInterval) {
        checking = false
        kept = Kept(answer: answer, at: now)
    }
}
