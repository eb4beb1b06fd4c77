/// What the "sign in again" notice offers after the server ended a session: the sign-in
/// (`SignInAgainPlan`, read from the ended session's last access token) and whether it must run
/// in a terminal, where the user can type what the browser cannot ask for.
public struct SignInAgainOffer: Sendable, Equatable {
    /// The sign-in to start.
    public var plan: SignInAgainPlan
    /// Whether it runs in a terminal rather than in the background.
    public var inTerminal: Bool

    /// The offer after a sign-out for `reason` of `ended`, the session as it was when it ended
    /// (nil when none was kept). A second factor is asked for when the sign-out was for lack of
    /// one, or when the account had one verified.
    public init(reason: SignOutReason, ended: Session?) {
        plan = SignInAgainPlan(accessToken: ended?.accessToken ?? "")
        let secondFactor = DesktopNoticeRule.isAboutSecondFactor(reason) || !(ended?.user.verifiedFactors.isEmpty ?? true)
        inTerminal = plan.needsTerminal(secondFactor: secondFactor)
    }

    /// Whether the notice may offer to start it at all: any plan but an anonymous user's, whom
    /// nobody can sign in as again (authd's sign-in page asks how when nothing tells).
    public var canBeStarted: Bool { plan != .anonymous }
}
