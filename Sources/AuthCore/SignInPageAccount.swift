import FoundationEssentials

/// Who a sign-in page signed in, as far as the page needs it: whom to name ("Signed in as …"),
/// the level the session reached, and the second factors that could raise it. Holds no token.
public struct SignInPageAccount: Sendable, Equatable {
    /// The user's email, if any.
    public var email: String?
    /// The user's phone, if any.
    public var phone: String?
    /// Whether the user is anonymous.
    public var isAnonymous: Bool
    /// The user's verified second factors.
    public var verifiedFactors: [FactorSummary]
    /// The level the session's access token states.
    public var level: AssuranceLevel

    /// The factor types the page can verify: a code from an authenticator app, or one sent by SMS.
    public static let verifiableFactorTypes: Set<String> = [FactorKind.totp.rawValue, FactorKind.phone.rawValue]

    /// An account from its parts.
    public init(email: String? = nil, phone: String? = nil, isAnonymous: Bool = false, verifiedFactors: [FactorSummary] = [],
                level: AssuranceLevel = .aal1) {
        self.email = email
        self.phone = phone
        self.isAnonymous = isAnonymous
        self.verifiedFactors = verifiedFactors
        self.level = level
    }

    /// The account a grant signed in: its user, and the level its access token states (`aal1`
    /// when the token does not say).
    public init(grant: SessionGrant) {
        self.init(user: grant.user, level: TokenAssurance(accessToken: grant.accessToken)?.level ?? .aal1)
    }

    /// The account a session holds: its user, at the level its access token states (`aal1`
    /// when the token does not say). What the driver reports once it has taken a session.
    public init(session: Session) {
        self.init(user: session.user, level: TokenAssurance(accessToken: session.accessToken)?.level ?? .aal1)
    }

    /// The account of `user`, signed in at `level`.
    public init(user: UserSummary, level: AssuranceLevel) {
        self.init(email: user.email, phone: user.phone, isAnonymous: user.isAnonymous, verifiedFactors: user.verifiedFactors,
                  level: level)
    }

    /// How the page names the user: the email address, else the phone number in its
    /// international form, else nil (an anonymous user, or one with neither).
    public var name: String? { email ?? phone.map(Self.international) }

    /// `phone` as people write it: GoTrue keeps a number's digits without the `+` it was typed
    /// with (`15551234567`), which reads as a local number.
    static func international(_ phone: String) -> String {
        !phone.isEmpty && phone.allSatisfy(\.isASCII) && phone.allSatisfy(\.isNumber) ? "+" + phone : phone
    }

    /// The verified factors the page can ask for, in the server's order.
    public var verifiableFactors: [FactorSummary] {
        verifiedFactors.filter { Self.verifiableFactorTypes.contains($0.type) }
    }

    /// Whether the session is below the level the user's factors reach (`aal2`), so that the
    /// page asks for a second factor.
    public var needsSecondFactor: Bool { level < .aal2 && !verifiedFactors.isEmpty }
}
