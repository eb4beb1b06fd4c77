import FoundationEssentials

/// An authenticator assurance level as GoTrue's `aal` claim names it: `aal1` after one factor
/// (a password, a code, a provider), `aal2` after a second factor (TOTP, phone) was verified on
/// the session.
public struct AssuranceLevel: RawRepresentable, Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The claim's value.
    public var rawValue: String

    /// The level named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// One factor.
    public static let aal1 = AssuranceLevel(rawValue: "aal1")
    /// Two factors.
    public static let aal2 = AssuranceLevel(rawValue: "aal2")

    /// The levels a request may ask for.
    public static let requestable: [AssuranceLevel] = [.aal1, .aal2]

    /// The number in the name (`aal2` → 2); 0 for a name of another form, which ranks below all.
    public var rank: Int {
        guard rawValue.hasPrefix("aal"), let number = Int(rawValue.dropFirst(3)), number > 0 else { return 0 }
        return number
    }

    /// Ordered by rank.
    public static func < (lhs: AssuranceLevel, rhs: AssuranceLevel) -> Bool { lhs.rank < rhs.rank }

    /// The claim's value.
    public var description: String { rawValue }
}

/// What an access token says about how its session was authenticated: its `aal` claim and the
/// methods of its `amr` claim (GoTrue lists them most recent first). Read from the token without
/// checking its signature: authd received it from the server itself, and uses this only to
/// describe the session and to refuse an app a token below the level it asked for; the server
/// checks the level again on every request.
public struct TokenAssurance: Sendable, Equatable {
    /// The `aal` claim.
    public var level: AssuranceLevel
    /// The `amr` claim's methods (`password`, `otp`, `totp`, `phone`, `oauth`, …), as listed.
    public var methods: [String]

    /// Creates an assurance.
    public init(level: AssuranceLevel, methods: [String]) {
        self.level = level
        self.methods = methods
    }

    /// The assurance `accessToken` states; nil when it is not a JWT or has no `aal` claim.
    public init?(accessToken: String) {
        guard let claims = TokenClaims(accessToken: accessToken), claims.wellFormed(["aal", "amr"]),
              let aal = claims.aal, !aal.isEmpty else { return nil }
        level = AssuranceLevel(rawValue: aal)
        methods = claims.amr?.compactMap(\.method) ?? []
    }

    /// The level the session can reach for `user`: `aal2` once the user has a verified factor
    /// (auth-js's `nextLevel`), otherwise the current one.
    public func nextLevel(for user: UserSummary) -> AssuranceLevel {
        user.verifiedFactors.isEmpty ? level : max(level, .aal2)
    }
}
