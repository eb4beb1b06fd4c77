/// Who may call a method, decided before the method runs (`MethodTable`).
///
/// Under a profile whose policy is `open` every program of the user is let through, as
/// ssh-agent does; under `ask` only the apps the user allowed (and the user's own tool) may use
/// the profile at all: a denied or undecided app must not reach the session or the account by
/// any other method than the token it was refused.
public enum MethodAudience: Sendable, Equatable {
    /// Any client of the user: nothing of a session or account is read or changed
    /// (`hello`, `session.makeNonce`, `server.check`).
    case everyone
    /// The user's own tool (the `authctl` installed with authd) or an app admitted to the
    /// profile (allowed, or the profile is open). Everything that reads or changes the session or
    /// the account: status, events, sign-in and sign-out of every kind, the user's record.
    case profileUsers
    /// Only an app admitted to the profile: the token itself, which the user decides per
    /// program, for authctl as for any other.
    case tokenTakers
    /// Only the user's own tool: the list of apps and the decisions about them.
    case userTool
}
