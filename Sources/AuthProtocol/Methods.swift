import FoundationEssentials

/// One JSON-RPC method: its name and the types of its parameters and result.
public protocol RPCMethod: Sendable {
    /// The parameters a client sends; they name the profile the call is for, if any.
    associatedtype Parameters: Codable & Sendable & ProfileScoped
    /// What the daemon answers.
    associatedtype Result: Codable & Sendable
    /// The method's wire name, `noun.verb`.
    static var name: String { get }
    /// Whether a client may send the call again when the connection broke before the answer came
    /// (authd got it or not, nobody can tell). True unless the method says otherwise.
    static var isSafeToRepeat: Bool { get }
}

extension RPCMethod {
    /// Most methods are: a second sign-in, token request or sign-out leaves things as one would.
    public static var isSafeToRepeat: Bool { true }
}

/// The methods authd serves. Field names on the wire are snake_case, as in GoTrue's JSON.
public enum Methods {
    /// Every method, for checking that each one has a handler.
    public static let allNames: [String] = [
        Hello.name, Status.name, Token.name, SignInWithPassword.name, SignOut.name, Subscribe.name, CheckServer.name,
        SignUp.name, SendCode.name, VerifyCode.name, SignInWithIdToken.name, MakeNonce.name,
        OAuthBegin.name, OAuthComplete.name, OAuthWait.name, GetUser.name, UpdateUser.name, Reauthenticate.name, Claims.name,
        ListApps.name, DecideApp.name, SetDefaultProfile.name,
        EnrollFactor.name, ChallengeFactor.name, VerifyFactor.name, UnenrollFactor.name, ListFactors.name,
        SignInAnonymously.name, SignInWithRefreshToken.name,
        Resend.name, ListIdentities.name, LinkIdentity.name, UnlinkIdentity.name, SingleSignOnBegin.name,
        BeginInteractiveSignIn.name, WaitForInteractiveSignIn.name, CancelInteractiveSignIn.name,
    ]

    /// `hello`: the version handshake.
    public enum Hello: RPCMethod {
        public static let name = "hello"
        /// What the client says about itself (display only: identity comes from the socket).
        public struct Parameters: Codable, Sendable, Equatable {
            /// A display name for the client.
            public var client: String?
            /// The protocol version the client speaks.
            public var protocolVersion: String?
            /// Creates hello parameters.
            public init(client: String? = nil, protocolVersion: String? = ProtocolVersion.current) {
                self.client = client
                self.protocolVersion = protocolVersion
            }
            enum CodingKeys: String, CodingKey { case client, protocolVersion = "protocol_version" }
        }
        /// The daemon's answer.
        public struct Result: Codable, Sendable, Equatable {
            /// The protocol version the daemon speaks.
            public var protocolVersion: String
            /// The daemon's software version.
            public var daemonVersion: String
            /// Optional features this daemon has.
            public var capabilities: [String]
            /// The profiles configured.
            public var profiles: [String]
            /// The default profile.
            public var defaultProfile: String
            /// Creates a hello result.
            public init(protocolVersion: String, daemonVersion: String, capabilities: [String], profiles: [String], defaultProfile: String) {
                self.protocolVersion = protocolVersion
                self.daemonVersion = daemonVersion
                self.capabilities = capabilities
                self.profiles = profiles
                self.defaultProfile = defaultProfile
            }
            enum CodingKeys: String, CodingKey {
                case protocolVersion = "protocol_version", daemonVersion = "daemon_version", capabilities, profiles
                case defaultProfile = "default_profile"
            }
        }
    }

    /// `session.status`: the state of a profile's session, without any token.
    public enum Status: RPCMethod {
        public static let name = "session.status"
        public typealias Parameters = ProfileParameters
        public typealias Result = SessionStatus
    }

    /// `session.token`: an access token valid for at least `min_validity` seconds.
    public enum Token: RPCMethod {
        public static let name = TokenRequestLine.method
        /// Token request parameters: the profile and how long the token must stay valid. The
        /// type lives with the hand-written codec (`TokenRequestLine`).
        public typealias Parameters = TokenParameters
        /// The token. The type lives with the hand-written codec (`TokenAnswerLine`).
        public typealias Result = TokenResult
    }

    /// `session.signInWithPassword`: email + password sign-in.
    public enum SignInWithPassword: RPCMethod {
        public static let name = "session.signInWithPassword"
        /// Credentials.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The email address.
            public var email: String
            /// The password. Never logged, never echoed back.
            public var password: String
            /// The token of a solved CAPTCHA, for a project that protects password sign-in with one.
            public var captchaToken: String?
            /// Creates sign-in parameters.
            public init(profile: String? = nil, email: String, password: String, captchaToken: String? = nil) {
                self.profile = profile
                self.email = email
                self.password = password
                self.captchaToken = captchaToken
            }
            enum CodingKeys: String, CodingKey { case profile, email, password, captchaToken = "captcha_token" }
        }
        public typealias Result = SessionStatus
    }

    /// `session.signOut`: end the session with a scope.
    public enum SignOut: RPCMethod {
        public static let name = "session.signOut"
        /// Sign-out parameters.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// `local` (default), `global` or `others`.
            public var scope: String?
            /// Creates sign-out parameters.
            public init(profile: String? = nil, scope: String? = nil) {
                self.profile = profile
                self.scope = scope
            }
        }
        /// The outcome.
        public struct Result: Codable, Sendable, Equatable {
            /// The status after the sign-out.
            public var status: SessionStatus
            /// Whether the server confirmed the sign-out (false when it was unreachable).
            public var serverConfirmed: Bool
            /// Why the server did not confirm, when it did not.
            public var serverDetail: String?
            /// Creates a sign-out result.
            public init(status: SessionStatus, serverConfirmed: Bool, serverDetail: String?) {
                self.status = status
                self.serverConfirmed = serverConfirmed
                self.serverDetail = serverDetail
            }
            enum CodingKeys: String, CodingKey {
                case status, serverConfirmed = "server_confirmed", serverDetail = "server_detail"
            }
        }
    }

    /// `events.subscribe`: answered with `{"subscribed":true}`, followed by an `INITIAL_SESSION`
    /// event carrying the current status, then every change as an `event` notification.
    public enum Subscribe: RPCMethod {
        public static let name = "events.subscribe"
        public typealias Parameters = ProfileParameters
        /// The acknowledgement.
        public struct Result: Codable, Sendable, Equatable {
            /// Always true.
            public var subscribed: Bool
            /// Creates the acknowledgement.
            public init(subscribed: Bool = true) { self.subscribed = subscribed }
        }
    }
}

extension Methods {
    /// `daemon.checkServer`: whether the profile's server answers `GET /auth/v1/health`, and how
    /// far the local clock is from the server's (`authctl doctor`).
    public enum CheckServer: RPCMethod {
        public static let name = "daemon.checkServer"
        public typealias Parameters = ProfileParameters
        /// What the check found.
        public struct Result: Codable, Sendable, Equatable {
            /// The profile's project URL.
            public var server: String
            /// Whether the server answered the health check.
            public var reachable: Bool
            /// Why not, when it did not.
            public var detail: String?
            /// Seconds the local clock is ahead of the server's (negative: behind), from its
            /// `Date` header; absent when the server sent none. Accurate to about a second.
            public var clockSkew: Double?
            /// Creates a result.
            public init(server: String, reachable: Bool, detail: String? = nil, clockSkew: Double? = nil) {
                self.server = server
                self.reachable = reachable
                self.detail = detail
                self.clockSkew = clockSkew
            }
            enum CodingKeys: String, CodingKey { case server, reachable, detail, clockSkew = "clock_skew" }
        }
    }
}

/// Parameters that only name a profile.
public struct ProfileParameters: Codable, Sendable, Equatable {
    /// The profile; the default one when absent.
    public var profile: String?
    /// Creates profile parameters.
    public init(profile: String? = nil) { self.profile = profile }
}
