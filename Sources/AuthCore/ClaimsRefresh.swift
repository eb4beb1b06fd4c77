/// Whether the session's access token still states what the server now holds about the user,
/// and who waits for one that does. A value a `SessionMachine` owns.
///
/// Some changes at the server alter claims the token carries: an anonymous user given an email
/// is no longer `is_anonymous`, which apps' row-level security reads. The token goes on stating
/// the old claims until a refresh, so from such a change on the held token is stale. The machine
/// then serves it to nobody while a refresh can bring a fresh one, and answers the change's
/// caller once a session refreshed after the change is stored.
///
/// Only a refresh started after the latest change counts: one already out when the server made
/// the change may have been answered before it, with the old claims.
struct ClaimsRefresh: Sendable {
    /// Nil while the token is current; otherwise whether a refresh started after the latest
    /// change is out (or its session is being written).
    private var refreshedSinceChange: Bool?
    /// The callers of the changes, answered with the fresh token or with why none could be had.
    private var waiters: [RequestID] = []

    /// Whether the held token states claims the server has changed since.
    var isStale: Bool { refreshedSinceChange != nil }

    /// The server changed the token's claims; `request` (the change's caller) waits for a token
    /// that states them. A refresh already out does not count: it may predate the change.
    mutating func changed(by request: RequestID) {
        refreshedSinceChange = false
        waiters.append(request)
    }

    /// The held token is known stale with nobody waiting: a session read back from the store
    /// after a restart, whose summary the change had already updated (`isStale(_:)`).
    mutating func markStale() {
        if refreshedSinceChange == nil { refreshedSinceChange = false }
    }

    /// Whether `session`'s token states claims its stored summary says the server has changed
    /// since: the user is no longer anonymous and the token still says `is_anonymous: true`. The
    /// change's summary is stored at once and the refreshed token only later, so a restart in
    /// between keeps the change, and this finds it.
    static func isStale(_ session: Session) -> Bool {
        !session.user.isAnonymous && TokenClaims(accessToken: session.accessToken)?.isAnonymous == true
    }

    /// Another change's caller waits with the ones before: the token it would get is stale.
    mutating func join(_ request: RequestID) {
        waiters.append(request)
    }

    /// A refresh started; it brings the changed claims if the token is stale.
    mutating func refreshStarted() {
        if refreshedSinceChange != nil { refreshedSinceChange = true }
    }

    /// A refreshed session was stored. True when it is the one the change waited for: the token
    /// is current again, and the waiters (`takeWaiters`) are answered with it.
    mutating func refreshStored() -> Bool {
        guard refreshedSinceChange == true else { return false }
        refreshedSinceChange = nil
        return true
    }

    /// The callers waiting, now to be answered; the token stays as stale as it was.
    mutating func takeWaiters() -> [RequestID] {
        defer { waiters.removeAll() }
        return waiters
    }
}
