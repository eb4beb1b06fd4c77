import FoundationEssentials

/// A per-session circuit breaker on refresh grants: at most `limit` refreshes start in any
/// `window` seconds, whatever clients ask for and whatever the server answers.
///
/// GoTrue limits the whole `/token` endpoint per client IP (150 per 5 minutes by default), so a
/// loop of refreshes (a client asking for more validity than any token has, a server granting
/// tokens that expire at once) would get every app of the user rate-limited. A token's normal
/// schedule refreshes once per half-lifetime at most, far below the limit for any real project.
public struct RefreshBudget: Sendable, Equatable {
    /// Refreshes allowed per window.
    public let limit: Int
    /// The window, in seconds.
    public let window: TimeInterval
    /// When the refreshes still inside the window started, oldest first (at most `limit`).
    private var starts: [Date] = []

    /// Creates a budget of `limit` refreshes per `window` seconds.
    public init(limit: Int, window: TimeInterval) {
        self.limit = max(1, limit)
        self.window = window
    }

    /// Takes one refresh at `now`; false, taking nothing, when the window is full.
    public mutating func take(now: Date) -> Bool {
        forgetOld(now: now)
        guard starts.count < limit else { return false }
        starts.append(now)
        return true
    }

    /// When the next refresh may start: `now` if one may start at once.
    public func nextAllowed(now: Date) -> Date {
        let inWindow = starts.map { min($0, now) }.filter { $0 > now.addingTimeInterval(-window) }
        guard inWindow.count >= limit, let oldest = inWindow.first else { return now }
        return max(now, oldest.addingTimeInterval(window))
    }

    /// Moves the recorded starts with a wall clock that was set (by `offset`, either way), so that
    /// the window counts real time: a clock set forward cannot empty it.
    public mutating func shift(by offset: TimeInterval) {
        starts = starts.map { $0.addingTimeInterval(offset) }
    }

    private mutating func forgetOld(now: Date) {
        // No refresh started in the future: a start recorded after a clock step and shifted by it
        // again when the step was noticed (seconds later) counts as starting now, so that a step
        // holds refreshes back for one window at most, never for the step's length.
        starts = starts.map { min($0, now) }
        starts.removeAll { $0 <= now.addingTimeInterval(-window) }
    }
}
