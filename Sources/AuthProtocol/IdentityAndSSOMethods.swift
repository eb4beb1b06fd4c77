import FoundationEssentials

/// Confirmations sent again, the identities linked to the user, and enterprise SSO.
extension Methods {
    /// `session.resend`: have the server send a confirmation again (`POST /resend`): `type`
    /// `signup` (an email sign-up), `sms` (a phone sign-up), `email_change` or `phone_change`.
    public enum Resend: RPCMethod {
        public static let name = "session.resend"
        /// What to send again, and where.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The email address (or `phone`).
            public var email: String?
            /// The phone number (or `email`).
            public var phone: String?
            /// What the message confirms; by the address when absent (`signup` or `sms`).
            public var type: String?
            /// For an email: where its link leads back to, as for `session.sendCode`.
            public var redirectTo: String?
            /// The token of a solved CAPTCHA, for a project that protects it with one.
            public var captchaToken: String?
            /// Creates parameters.
            public init(profile: String? = nil, email: String? = nil, phone: String? = nil, type: String? = nil, redirectTo: String? = nil,
                        captchaToken: String? = nil) {
                self.profile = profile
                self.email = email
                self.phone = phone
                self.type = type
                self.redirectTo = redirectTo
                self.captchaToken = captchaToken
            }
            enum CodingKeys: String, CodingKey { case profile, email, phone, type, redirectTo = "redirect_to", captchaToken = "captcha_token" }
        }
        public typealias Result = SendCode.Result
    }

    /// `identities.list`: the identities linked to the signed-in user (`GET /user`'s `identities`).
    public enum ListIdentities: RPCMethod {
        public static let name = "identities.list"
        public typealias Parameters = ProfileParameters
        /// The identities.
        public struct Result: Codable, Sendable, Equatable {
            /// The profile.
            public var profile: String
            /// Oldest first.
            public var identities: [Identity]
            /// Creates a result.
            public init(profile: String, identities: [Identity]) {
                self.profile = profile
                self.identities = identities
            }
        }

        /// One identity: a provider's account linked to the user.
        public struct Identity: Codable, Sendable, Equatable {
            /// Names it in `identities.unlink`.
            public var identityID: String
            /// `email`, `phone`, `github`, `google`, `sso:<id>`, …
            public var provider: String
            /// The identity's email, when it has one.
            public var email: String?
            /// When it was linked, as the server wrote it.
            public var createdAt: String?
            /// When it last signed in, as the server wrote it.
            public var lastSignInAt: String?
            /// Creates an identity.
            public init(identityID: String, provider: String, email: String? = nil, createdAt: String? = nil, lastSignInAt: String? = nil) {
                self.identityID = identityID
                self.provider = provider
                self.email = email
                self.createdAt = createdAt
                self.lastSignInAt = lastSignInAt
            }
            enum CodingKeys: String, CodingKey {
                case identityID = "identity_id", provider, email, createdAt = "created_at", lastSignInAt = "last_sign_in_at"
            }
        }
    }

    /// `identities.link`: start linking an OAuth provider's identity to the signed-in user in a
    /// browser (`GET /user/identities/authorize`, PKCE); the redirect completes it through
    /// `oauth.complete` or `oauth.wait` like a browser sign-in, and the session then carries it.
    public enum LinkIdentity: RPCMethod {
        public static let name = "identities.link"
        /// The provider, the redirect and extra scopes, as for `oauth.begin`.
        public typealias Parameters = OAuthBegin.Parameters
        public typealias Result = OAuthBegin.Result
    }

    /// `identities.unlink`: remove an identity from the user (`DELETE /user/identities/{id}`);
    /// the server refuses to remove the last one.
    public enum UnlinkIdentity: RPCMethod {
        public static let name = "identities.unlink"
        /// The identity.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// Its `identity_id`, as `identities.list` shows it.
            public var identityID: String
            /// Creates parameters.
            public init(profile: String? = nil, identityID: String) {
                self.profile = profile
                self.identityID = identityID
            }
            enum CodingKeys: String, CodingKey { case profile, identityID = "identity_id" }
        }
        /// What was removed.
        public struct Result: Codable, Sendable, Equatable {
            /// The profile.
            public var profile: String
            /// The identity removed.
            public var identityID: String
            /// Creates a result.
            public init(profile: String, identityID: String) {
                self.profile = profile
                self.identityID = identityID
            }
            enum CodingKeys: String, CodingKey { case profile, identityID = "identity_id" }
        }
    }

    /// `sso.begin`: start an enterprise SSO (SAML) sign-in in a browser (`POST /sso`, PKCE), for
    /// the provider of an email `domain` or the one with `provider_id`; completed like a browser
    /// sign-in through `oauth.complete` or `oauth.wait`.
    public enum SingleSignOnBegin: RPCMethod {
        public static let name = "sso.begin"
        /// The provider and the redirect.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The company's email domain (or `provider_id`).
            public var domain: String?
            /// The SSO provider's id (or `domain`).
            public var providerID: String?
            /// Where the browser is sent back, as for `oauth.begin`.
            public var redirectTo: String
            /// Creates parameters.
            public init(profile: String? = nil, domain: String? = nil, providerID: String? = nil, redirectTo: String) {
                self.profile = profile
                self.domain = domain
                self.providerID = providerID
                self.redirectTo = redirectTo
            }
            enum CodingKeys: String, CodingKey { case profile, domain, providerID = "provider_id", redirectTo = "redirect_to" }
        }
        public typealias Result = OAuthBegin.Result
    }
}
