import Foundation

/// Authenticator assurance levels as GoTrue derives them: a session's `aal` and `amr` claims
/// from its AMR entries, a user's highest possible level from their factors, and the
/// `SESSIONS_ALLOW_LOW_AAL` rule that ends sessions left below it.
extension DevSession {
    /// The methods that make a session `aal2` (GoTrue's `IsAAL2Claim`).
    static let secondFactorMethods: Set<String> = ["totp", "mfa/phone", "mfa/webauthn"]

    /// The `aal` claim: `aal2` as soon as one second-factor method is among the AMR entries
    /// (GoTrue's `CalculateAALAndAMR`, which the access token is made from).
    var claimedAAL: String {
        amr.contains { Self.secondFactorMethods.contains($0.method) } ? "aal2" : "aal1"
    }

    /// The `amr` claim: most recent first, as GoTrue sorts it. Entries used at the same second
    /// keep the later-added one first, so a verification made at sign-in time still leads.
    var amrClaim: [[String: Any]] {
        amr.enumerated()
            .sorted { ($0.element.timestamp, $0.offset) > ($1.element.timestamp, $1.offset) }
            .map { ["method": $0.element.method, "timestamp": Int($0.element.timestamp.timeIntervalSince1970)] }
    }

    /// Records a use of `method` now: GoTrue keeps one entry per method and moves its time on.
    mutating func addAMR(_ method: String, at now: Date) {
        if let index = amr.firstIndex(where: { $0.method == method }) {
            amr[index].timestamp = now
        } else {
            amr.append(DevAMREntry(method: method, timestamp: now))
        }
    }
}

extension DevUser {
    /// `aal2` when the user has a verified factor, else `aal1` (GoTrue's `HighestPossibleAAL`).
    var highestPossibleAAL: String {
        factors.contains(where: \.verified) ? "aal2" : "aal1"
    }
}

extension DevStore {
    /// Whether `session` has outlived `allowLowAAL` below its user's highest possible level
    /// (GoTrue's `SessionLowAAL` validity): its refreshes and Bearer calls are then refused.
    func isLowAALExpired(_ session: DevSession, user: DevUser, now: Date) -> Bool {
        guard let limit = allowLowAAL, limit > 0 else { return false }
        // GoTrue compares the level names as strings ("aal1" < "aal2"), and so does this.
        return session.aal < user.highestPossibleAAL && now > session.createdAt.addingTimeInterval(limit)
    }

    /// The latest time an access token of `session` may expire at: GoTrue shortens the tokens of
    /// a low-AAL session to the end of its `allowLowAAL` allowance. Nil when no cap applies.
    func lowAALExpiry(_ session: DevSession, user: DevUser) -> Date? {
        guard let limit = allowLowAAL, limit > 0, session.claimedAAL < user.highestPossibleAAL else { return nil }
        return session.createdAt.addingTimeInterval(limit)
    }
}
