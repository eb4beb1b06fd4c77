import FoundationEssentials

/// Two ways in that need no credential typed by the user: a new anonymous user, and a session an
/// app held until now.
extension Methods {
    /// `session.signInAnonymously`: sign in as a new anonymous user (GoTrue's `POST /signup`
    /// without email or phone). The user becomes a permanent one, keeping its id, once it is
    /// given an email address or phone number (`user.update`, confirmed by the code sent there
    /// unless the project confirms automatically).
    public enum SignInAnonymously: RPCMethod {
        public static let name = "session.signInAnonymously"
        /// The new user's data.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// Initial `user_metadata`.
            public var data: [String: JSONValue]?
            /// The token of a solved CAPTCHA, for a project that protects sign-up with one.
            public var captchaToken: String?
            /// Creates parameters.
            public init(profile: String? = nil, data: [String: JSONValue]? = nil, captchaToken: String? = nil) {
                self.profile = profile
                self.data = data
                self.captchaToken = captchaToken
            }
            enum CodingKeys: String, CodingKey { case profile, data, captchaToken = "captcha_token" }
        }
        public typealias Result = SessionStatus
    }

    /// `session.signInWithRefreshToken`: move a session an app kept in its own storage into
    /// authd. authd exchanges the refresh token (which proves it), then refreshes the session
    /// once more at once, so that the app's copy is no longer the immediate parent of the
    /// current token (which GoTrue would answer with it), and from then on is the session's only
    /// refresher. The result's `degraded` is set when that second refresh is still to be retried.
    /// The app must forget its tokens: presenting them again ends the whole session.
    public enum SignInWithRefreshToken: RPCMethod {
        public static let name = "session.signInWithRefreshToken"
        /// Not safe to repeat: a call authd got spends the token (and refreshes once more), and
        /// the same token presented again is a spent one, which can end the whole session.
        public static let isSafeToRepeat = false
        /// The session's refresh token.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The refresh token. Never logged, never echoed back.
            public var refreshToken: String
            /// Creates parameters.
            public init(profile: String? = nil, refreshToken: String) {
                self.profile = profile
                self.refreshToken = refreshToken
            }
            enum CodingKeys: String, CodingKey { case profile, refreshToken = "refresh_token" }
        }
        public typealias Result = SessionStatus
    }
}
