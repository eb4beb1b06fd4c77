/// Why the sign-in page's server could not start, or closed a connection unread.
public enum SignInPageServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The listener has no port (it did not bind as asked).
    case noPort
    /// A connection came from a socket another user owns, or one whose owner cannot be told:
    /// it is closed unread (what fails its channel's set-up).
    case anotherUser
    /// A connection was accepted after the server stopped serving: it is closed unread.
    case closed

    /// What went wrong, in words.
    public var description: String {
        switch self {
        case .noPort: return "the sign-in page's server could not tell which port it listens on"
        case .anotherUser: return "a connection from another user (or an unknown one) was closed unread"
        case .closed: return "a connection that came as the sign-in page closed was closed unread"
        }
    }
}
