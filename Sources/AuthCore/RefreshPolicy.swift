import FoundationEssentials

/// When to refresh and how long to wait after a transient failure. Pure arithmetic.
public struct RefreshPolicy: Sendable, Equatable {
    /// Lead time before expiry when no fixed lead is configured: the larger of this and
    /// `leadFraction` of the lifetime.
    public var minimumLead: TimeInterval
    /// Fraction of the lifetime to refresh ahead of expiry.
    public var leadFraction: Double
    /// A fixed lead time, overriding the computed one when set.
    public var fixedLead: TimeInterval?
    /// Fraction of the lifetime that may be taken off the deadline at random, so that many
    /// daemons signed in at the same moment do not refresh in lockstep.
    public var jitterFraction: Double
    /// First retry delay after a transient failure.
    public var backoffBase: TimeInterval
    /// Upper bound of the retry delay.
    public var backoffCap: TimeInterval
    /// How soon after a failure a token request may start another attempt by itself.
    public var minimumRetryGap: TimeInterval
    /// Upper bound of the delay between attempts to read a keyring that was unreadable (locked,
    /// not running): short, because the user unlocking it should be noticed soon.
    public var storeReloadCap: TimeInterval
    /// At most this many refresh grants start in any `refreshLimitWindow` (the circuit breaker,
    /// `RefreshBudget`).
    public var refreshLimit: Int
    /// The window of `refreshLimit`, in seconds.
    public var refreshLimitWindow: TimeInterval

    /// The defaults: lead max(60 s, 10 %), 2 % jitter, backoff 2 s doubling to 5 min, at most 10
    /// refresh grants a minute.
    public init(minimumLead: TimeInterval = 60, leadFraction: Double = 0.1, fixedLead: TimeInterval? = nil,
                jitterFraction: Double = 0.02, backoffBase: TimeInterval = 2, backoffCap: TimeInterval = 300,
                minimumRetryGap: TimeInterval = 2, storeReloadCap: TimeInterval = 30,
                refreshLimit: Int = 10, refreshLimitWindow: TimeInterval = 60) {
        self.minimumLead = minimumLead
        self.leadFraction = leadFraction
        self.fixedLead = fixedLead
        self.jitterFraction = jitterFraction
        self.backoffBase = backoffBase
        self.backoffCap = backoffCap
        self.minimumRetryGap = minimumRetryGap
        self.storeReloadCap = storeReloadCap
        self.refreshLimit = refreshLimit
        self.refreshLimitWindow = refreshLimitWindow
    }

    /// The lead time for a token of `lifetime` seconds. Never more than half the lifetime,
    /// so short-lived tokens (tests, strict projects) are not refreshed in a loop.
    public func lead(forLifetime lifetime: TimeInterval) -> TimeInterval {
        let wanted = fixedLead ?? max(minimumLead, leadFraction * lifetime)
        return min(wanted, lifetime / 2)
    }

    /// The wall-clock date at which `session` should be refreshed. `random` in 0..<1.
    public func refreshDeadline(for session: Session, random: Double) -> Date {
        let lifetime = max(session.lifetime, 0)
        let jitter = jitterFraction * lifetime * min(max(random, 0), 1)
        return session.expiresAt.addingTimeInterval(-lead(forLifetime: lifetime) - jitter)
    }

    /// The longest `Retry-After` honoured: a server (or a proxy pretending to be one) cannot park
    /// the session for longer than an hour.
    public static let retryAfterCap: TimeInterval = 3600

    /// The delay before retry number `attempt` (1-based). `random` in 0..<1 spreads it to
    /// 50–100 % of the exponential value; a server's `Retry-After` is a floor, taken between 0
    /// and `retryAfterCap` (a value that is not a finite number counts as none).
    public func backoff(attempt: Int, retryAfter: TimeInterval?, random: Double) -> TimeInterval {
        let doublings = min(max(attempt - 1, 0), 30)
        let raw = min(backoffCap, backoffBase * Double(1 << doublings))
        let spread = raw * (0.5 + 0.5 * min(max(random.isFinite ? random : 0.5, 0), 1))
        let floor = retryAfter.flatMap { $0.isFinite ? min(max($0, 0), Self.retryAfterCap) : nil } ?? 0
        return min(max(spread, floor), max(backoffCap, floor))
    }
}
