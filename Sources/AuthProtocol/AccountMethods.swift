import FoundationEssentials

/// The sign-in methods beyond email + password, and the user's own record.
extension Methods {
    /// `session.signUp`: create an account. With an auto-confirming project the new session is
    /// signed in (`SIGNED_IN`); otherwise a code is sent and `session.verifyCode` completes it.
    public enum SignUp: RPCMethod {
        public static let name = "session.signUp"
        /// The new account.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The email address (or `phone`).
            public var email: String?
            /// The phone number in E.164 form (or `email`).
            public var phone: String?
            /// The password. Never logged, never echoed back.
            public var password: String
            /// Initial `user_metadata`.
            public var data: [String: JSONValue]?
            /// The token of a solved CAPTCHA, for a project that protects sign-up with one.
            public var captchaToken: String?
            /// For an email: where the confirmation link leads back to, as for `session.sendCode`.
            public var redirectTo: String?
            /// Creates sign-up parameters.
            public init(profile: String? = nil, email: String? = nil, phone: String? = nil, password: String, data: [String: JSONValue]? = nil,
                        captchaToken: String? = nil, redirectTo: String? = nil) {
                self.profile = profile
                self.email = email
                self.phone = phone
                self.password = password
                self.data = data
                self.captchaToken = captchaToken
                self.redirectTo = redirectTo
            }
            enum CodingKeys: String, CodingKey { case profile, email, phone, password, data, captchaToken = "captcha_token", redirectTo = "redirect_to" }
        }
        /// The outcome.
        public struct Result: Codable, Sendable, Equatable {
            /// The status afterwards (`signed_in` when the project confirms automatically).
            public var status: SessionStatus
            /// True when the account must be confirmed with the code sent to `sent_to`.
            public var confirmationSent: Bool
            /// Where the confirmation was sent.
            public var sentTo: String?
            /// With `redirect_to` and a confirmation sent: the flow its link completes.
            public var flowID: String?
            /// Creates a result.
            public init(status: SessionStatus, confirmationSent: Bool, sentTo: String? = nil, flowID: String? = nil) {
                self.status = status
                self.confirmationSent = confirmationSent
                self.sentTo = sentTo
                self.flowID = flowID
            }
            enum CodingKeys: String, CodingKey { case status, confirmationSent = "confirmation_sent", sentTo = "sent_to", flowID = "flow_id" }
        }
    }

    /// `session.sendCode`: have the server send a one-time code (and magic link) by email or
    /// SMS, for signing in (`purpose: "sign_in"`) or recovering a password (`"recovery"`, email only).
    public enum SendCode: RPCMethod {
        public static let name = "session.sendCode"
        /// Where to send the code and why.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The email address (or `phone`).
            public var email: String?
            /// The phone number (or `email`).
            public var phone: String?
            /// `sign_in` (the default) or `recovery`.
            public var purpose: String?
            /// For `sign_in`: create the account when the address is unknown (default false).
            public var createUser: Bool?
            /// The token of a solved CAPTCHA, for a project that protects sending codes with one.
            public var captchaToken: String?
            /// For an email: where its link leads back to (`http://127.0.0.1:<port>/…` or an app's
            /// custom scheme); the link then signs in through `oauth.complete` or `oauth.wait`
            /// with the answer's `flow_id`. Without it the link goes to the project's Site URL.
            public var redirectTo: String?
            /// Creates parameters.
            public init(profile: String? = nil, email: String? = nil, phone: String? = nil, purpose: String? = nil, createUser: Bool? = nil,
                        captchaToken: String? = nil, redirectTo: String? = nil) {
                self.profile = profile
                self.email = email
                self.phone = phone
                self.purpose = purpose
                self.createUser = createUser
                self.captchaToken = captchaToken
                self.redirectTo = redirectTo
            }
            enum CodingKeys: String, CodingKey {
                case profile, email, phone, purpose, createUser = "create_user", captchaToken = "captcha_token", redirectTo = "redirect_to"
            }
        }
        /// Where the code went.
        public struct Result: Codable, Sendable, Equatable {
            /// The address or number.
            public var sentTo: String
            /// `email` or `sms`.
            public var channel: String
            /// With `redirect_to`: the flow the email's link completes.
            public var flowID: String?
            /// Creates a result.
            public init(sentTo: String, channel: String, flowID: String? = nil) {
                self.sentTo = sentTo
                self.channel = channel
                self.flowID = flowID
            }
            enum CodingKeys: String, CodingKey { case sentTo = "sent_to", channel, flowID = "flow_id" }
        }
    }

    /// `session.verifyCode`: sign in with a one-time code. `type` is `email` (sign-in code or
    /// sign-up confirmation), `sms`, `signup`, `magiclink`, `recovery` (announced as
    /// `PASSWORD_RECOVERY`), `email_change` or `phone_change`.
    public enum VerifyCode: RPCMethod {
        public static let name = "session.verifyCode"
        /// The code.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The email address the code was sent to (or `phone`).
            public var email: String?
            /// The phone number the code was sent to (or `email`).
            public var phone: String?
            /// The code. Never logged.
            public var code: String
            /// What the code was sent for; `email` or `sms` (by the address) when absent.
            public var type: String?
            /// Creates parameters.
            public init(profile: String? = nil, email: String? = nil, phone: String? = nil, code: String, type: String? = nil) {
                self.profile = profile
                self.email = email
                self.phone = phone
                self.code = code
                self.type = type
            }
        }
        public typealias Result = SessionStatus
    }

    /// `session.signInWithIdToken`: sign in with an OpenID Connect ID token an app already holds
    /// (Sign in with Apple, Google Sign-In).
    public enum SignInWithIdToken: RPCMethod {
        public static let name = "session.signInWithIdToken"
        /// The token.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// `google`, `apple`, `azure`, `facebook` or `keycloak`.
            public var provider: String
            /// The ID token (a JWT). Never logged.
            public var idToken: String
            /// The provider's access token, needed when the ID token has an `at_hash` claim.
            public var accessToken: String?
            /// The raw nonce whose SHA-256 hex is in the token's `nonce` claim.
            public var nonce: String?
            /// Creates parameters.
            public init(profile: String? = nil, provider: String, idToken: String, accessToken: String? = nil, nonce: String? = nil) {
                self.profile = profile
                self.provider = provider
                self.idToken = idToken
                self.accessToken = accessToken
                self.nonce = nonce
            }
            enum CodingKeys: String, CodingKey { case profile, provider, idToken = "id_token", accessToken = "access_token", nonce }
        }
        public typealias Result = SessionStatus
    }

    /// `session.makeNonce`: a fresh random nonce for an ID-token sign-in. Give `nonce_sha256` to
    /// Apple or Google when asking for the ID token, and `nonce` to `session.signInWithIdToken`.
    public enum MakeNonce: RPCMethod {
        public static let name = "session.makeNonce"
        public typealias Parameters = ProfileParameters
        /// The nonce both ways.
        public struct Result: Codable, Sendable, Equatable {
            /// The raw nonce (for GoTrue).
            public var nonce: String
            /// Lower-case hex SHA-256 of the raw nonce (for the provider).
            public var nonceSHA256: String
            /// Creates a result.
            public init(nonce: String, nonceSHA256: String) {
                self.nonce = nonce
                self.nonceSHA256 = nonceSHA256
            }
            enum CodingKeys: String, CodingKey { case nonce, nonceSHA256 = "nonce_sha256" }
        }
    }

    /// `oauth.begin`: start a browser sign-in with PKCE. The daemon keeps the code verifier and
    /// answers the URL to open; the redirect comes back through `oauth.complete`.
    public enum OAuthBegin: RPCMethod {
        public static let name = "oauth.begin"
        /// The flow to start.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The provider (`google`, `apple`, `github`, …).
            public var provider: String
            /// Where the browser is sent back: `http://127.0.0.1:<port>/…` or an app's custom scheme.
            public var redirectTo: String
            /// Extra provider scopes, space-separated.
            public var scopes: String?
            /// Creates parameters.
            public init(profile: String? = nil, provider: String, redirectTo: String, scopes: String? = nil) {
                self.profile = profile
                self.provider = provider
                self.redirectTo = redirectTo
                self.scopes = scopes
            }
            enum CodingKeys: String, CodingKey { case profile, provider, redirectTo = "redirect_to", scopes }
        }
        /// The flow.
        public struct Result: Codable, Sendable, Equatable {
            /// Names the flow in `oauth.complete` and `oauth.wait`.
            public var flowID: String
            /// The URL to open in a browser.
            public var url: String
            /// Seconds the flow waits for its redirect.
            public var expiresIn: Int
            /// Creates a result.
            public init(flowID: String, url: String, expiresIn: Int) {
                self.flowID = flowID
                self.url = url
                self.expiresIn = expiresIn
            }
            enum CodingKeys: String, CodingKey { case flowID = "flow_id", url, expiresIn = "expires_in" }
        }
    }

    /// `oauth.complete`: hand over the URL the browser was redirected to. With `flow_id` (a
    /// loopback listener) that flow is completed; without it (`authctl open-url` for a custom
    /// scheme) the newest flow started with that redirect address is.
    public enum OAuthComplete: RPCMethod {
        public static let name = "oauth.complete"
        /// The redirect.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The flow, when known.
            public var flowID: String?
            /// The full redirect URL, with its `code` or `error` parameters.
            public var callbackURL: String
            /// Creates parameters.
            public init(profile: String? = nil, flowID: String? = nil, callbackURL: String) {
                self.profile = profile
                self.flowID = flowID
                self.callbackURL = callbackURL
            }
            enum CodingKeys: String, CodingKey { case profile, flowID = "flow_id", callbackURL = "callback_url" }
        }
        public typealias Result = SessionStatus
    }

    /// `oauth.wait`: wait until the flow is completed by someone else (`authctl open-url`), and
    /// answer as `oauth.complete` did, or with an error when the flow expires first.
    public enum OAuthWait: RPCMethod {
        public static let name = "oauth.wait"
        /// The flow to wait for.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The flow.
            public var flowID: String
            /// Creates parameters.
            public init(profile: String? = nil, flowID: String) {
                self.profile = profile
                self.flowID = flowID
            }
            enum CodingKeys: String, CodingKey { case profile, flowID = "flow_id" }
        }
        public typealias Result = SessionStatus
    }

    /// `user.get`: the signed-in user as the server describes it (`GET /auth/v1/user`).
    public enum GetUser: RPCMethod {
        public static let name = "user.get"
        public typealias Parameters = ProfileParameters
        public typealias Result = UserResult
    }

    /// `user.update`: change the signed-in user's email, phone, password or metadata
    /// (`PUT /auth/v1/user`); announced as `USER_UPDATED`.
    public enum UpdateUser: RPCMethod {
        public static let name = "user.update"
        /// The changes; absent fields are left alone.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// A new email address.
            public var email: String?
            /// A new phone number.
            public var phone: String?
            /// A new password. Never logged.
            public var password: String?
            /// Keys to merge into `user_metadata`.
            public var data: [String: JSONValue]?
            /// With `password`, on a project that asks for it: the code `user.reauthenticate`
            /// had sent. Never logged.
            public var nonce: String?
            /// Creates parameters.
            public init(profile: String? = nil, email: String? = nil, phone: String? = nil, password: String? = nil, data: [String: JSONValue]? = nil,
                        nonce: String? = nil) {
                self.profile = profile
                self.email = email
                self.phone = phone
                self.password = password
                self.data = data
                self.nonce = nonce
            }
        }
        public typealias Result = UserResult
    }

    /// `session.claims`: the claims of the profile's access token (`sub`, `role`, `aal`, `amr`,
    /// `email`, `exp`, …) and whether authd verified them with the project's published signing
    /// keys (ES256, RS256), as auth-js's `getClaims` does. Never the token itself.
    public enum Claims: RPCMethod {
        public static let name = "session.claims"
        public typealias Parameters = ProfileParameters
        /// The claims and how far they were checked.
        public struct Result: Codable, Sendable, Equatable {
            /// The profile.
            public var profile: String
            /// The token's claims, as it carries them.
            public var claims: JSONValue
            /// The token's `alg`.
            public var algorithm: String
            /// The token's `kid`, when it names one.
            public var keyID: String?
            /// True when the signature holds under one of the project's published keys and the
            /// token has not expired.
            public var verified: Bool
            /// How it was checked, or why it could not be (an HS256 token: only the server can).
            public var detail: String
            /// Creates a result.
            public init(profile: String, claims: JSONValue, algorithm: String, keyID: String?, verified: Bool, detail: String) {
                self.profile = profile
                self.claims = claims
                self.algorithm = algorithm
                self.keyID = keyID
                self.verified = verified
                self.detail = detail
            }
            enum CodingKeys: String, CodingKey { case profile, claims, algorithm, keyID = "key_id", verified, detail }
        }
    }

    /// `user.reauthenticate`: has the server send the signed-in user a code (by email, else
    /// SMS) that a password change on a project with secure password change carries as
    /// `user.update`'s `nonce` (`GET /auth/v1/reauthenticate`).
    public enum Reauthenticate: RPCMethod {
        public static let name = "user.reauthenticate"
        public typealias Parameters = ProfileParameters
        /// Where the code went, as far as authd knows the user.
        public struct Result: Codable, Sendable, Equatable {
            /// The email address or phone number; absent when the session does not say.
            public var sentTo: String?
            /// `email` or `sms`; absent with `sent_to`.
            public var channel: String?
            /// Creates a result.
            public init(sentTo: String?, channel: String?) {
                self.sentTo = sentTo
                self.channel = channel
            }
            enum CodingKeys: String, CodingKey { case sentTo = "sent_to", channel }
        }
    }
}

/// The server's user object, passed through as it came.
public struct UserResult: Codable, Sendable, Equatable {
    /// The profile.
    public var profile: String
    /// The user object (`id`, `email`, `phone`, `user_metadata`, `identities`, …).
    public var user: JSONValue
    /// Creates a result.
    public init(profile: String, user: JSONValue) {
        self.profile = profile
        self.user = user
    }
}
