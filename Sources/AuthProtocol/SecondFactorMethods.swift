import FoundationEssentials

/// Multi-factor authentication: the signed-in user's second factors (TOTP apps and phones) and
/// raising the session to `aal2` with one of them.
extension Methods {
    /// `mfa.enroll`: adds a second factor, unverified until a code of it passes `mfa.verify`
    /// (which also raises the session to `aal2`). A TOTP factor's answer carries the secret and
    /// the `otpauth://` URI for the authenticator app: the only time they are shown.
    public enum EnrollFactor: RPCMethod {
        public static let name = "mfa.enroll"
        /// The factor to add.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// `totp` or `phone`.
            public var factorType: String
            /// A name to tell the factor apart from the user's others.
            public var friendlyName: String?
            /// For `totp`: the issuer the authenticator app shows (the server's host when absent).
            public var issuer: String?
            /// For `phone`: the number, in E.164 form.
            public var phone: String?
            /// Creates parameters.
            public init(profile: String? = nil, factorType: String, friendlyName: String? = nil, issuer: String? = nil, phone: String? = nil) {
                self.profile = profile
                self.factorType = factorType
                self.friendlyName = friendlyName
                self.issuer = issuer
                self.phone = phone
            }
            enum CodingKeys: String, CodingKey { case profile, factorType = "factor_type", friendlyName = "friendly_name", issuer, phone }
        }
        /// The new factor.
        public struct Result: Codable, Sendable, Equatable {
            /// The profile.
            public var profile: String
            /// The factor's id, for `mfa.challenge`, `mfa.verify` and `mfa.unenroll`.
            public var factorID: String
            /// `totp` or `phone`.
            public var type: String
            /// The name given.
            public var friendlyName: String?
            /// For `totp`: what the authenticator app needs.
            public var totp: TOTP?
            /// For `phone`: the number.
            public var phone: String?
            /// Creates a result.
            public init(profile: String, factorID: String, type: String, friendlyName: String? = nil, totp: TOTP? = nil, phone: String? = nil) {
                self.profile = profile
                self.factorID = factorID
                self.type = type
                self.friendlyName = friendlyName
                self.totp = totp
                self.phone = phone
            }
            enum CodingKeys: String, CodingKey { case profile, factorID = "factor_id", type, friendlyName = "friendly_name", totp, phone }
        }
        /// A TOTP factor's setup. Secret: shown to the user who enrolls, and nowhere else.
        public struct TOTP: Codable, Sendable, Equatable {
            /// The `otpauth://totp/…` URI (a QR code of it is what authenticator apps scan).
            public var uri: String
            /// The secret in base32, for typing in.
            public var secret: String
            /// The server's QR code of the URI, an SVG document.
            public var qrCode: String?
            /// Creates the setup.
            public init(uri: String, secret: String, qrCode: String? = nil) {
                self.uri = uri
                self.secret = secret
                self.qrCode = qrCode
            }
            enum CodingKeys: String, CodingKey { case uri, secret, qrCode = "qr_code" }
        }
    }

    /// `mfa.challenge`: starts a verification of a factor. For a phone factor the server sends
    /// the code now; a TOTP code needs no challenge beforehand (`mfa.verify` makes one).
    public enum ChallengeFactor: RPCMethod {
        public static let name = "mfa.challenge"
        /// The factor.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The factor's id.
            public var factorID: String
            /// For a phone factor: `sms` (the default) or `whatsapp`.
            public var channel: String?
            /// Creates parameters.
            public init(profile: String? = nil, factorID: String, channel: String? = nil) {
                self.profile = profile
                self.factorID = factorID
                self.channel = channel
            }
            enum CodingKeys: String, CodingKey { case profile, factorID = "factor_id", channel }
        }
        /// The challenge.
        public struct Result: Codable, Sendable, Equatable {
            /// The factor's id.
            public var factorID: String
            /// The challenge's id, for `mfa.verify`.
            public var challengeID: String
            /// The factor's type.
            public var type: String
            /// When the server stops accepting a code for it (Unix seconds, the server's clock).
            public var expiresAt: Int64?
            /// Creates a result.
            public init(factorID: String, challengeID: String, type: String, expiresAt: Int64?) {
                self.factorID = factorID
                self.challengeID = challengeID
                self.type = type
                self.expiresAt = expiresAt
            }
            enum CodingKeys: String, CodingKey { case factorID = "factor_id", challengeID = "challenge_id", type, expiresAt = "expires_at" }
        }
    }

    /// `mfa.verify`: a factor's code. Raises the session to `aal2` (announced as
    /// `MFA_CHALLENGE_VERIFIED`) and, for a newly enrolled factor, verifies the factor. Without
    /// `challenge_id` a challenge is made first, which suits TOTP; a phone factor's code belongs to
    /// the challenge that sent it.
    public enum VerifyFactor: RPCMethod {
        public static let name = "mfa.verify"
        /// The code.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The factor's id.
            public var factorID: String
            /// The challenge the code answers; made here when absent (TOTP).
            public var challengeID: String?
            /// The code. Never logged.
            public var code: String
            /// Creates parameters.
            public init(profile: String? = nil, factorID: String, challengeID: String? = nil, code: String) {
                self.profile = profile
                self.factorID = factorID
                self.challengeID = challengeID
                self.code = code
            }
            enum CodingKeys: String, CodingKey { case profile, factorID = "factor_id", challengeID = "challenge_id", code }
        }
        public typealias Result = SessionStatus
    }

    /// `mfa.unenroll`: removes a factor (a verified one only from an `aal2` session). The session
    /// is refreshed afterwards, since its tokens may state a level it no longer has.
    public enum UnenrollFactor: RPCMethod {
        public static let name = "mfa.unenroll"
        /// The factor.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The factor's id.
            public var factorID: String
            /// Creates parameters.
            public init(profile: String? = nil, factorID: String) {
                self.profile = profile
                self.factorID = factorID
            }
            enum CodingKeys: String, CodingKey { case profile, factorID = "factor_id" }
        }
        /// What was removed.
        public struct Result: Codable, Sendable, Equatable {
            /// The profile.
            public var profile: String
            /// The removed factor's id.
            public var factorID: String
            /// Creates a result.
            public init(profile: String, factorID: String) {
                self.profile = profile
                self.factorID = factorID
            }
            enum CodingKeys: String, CodingKey { case profile, factorID = "factor_id" }
        }
    }

    /// `mfa.factors`: the user's factors as the server lists them, and the session's assurance
    /// level with the level it can reach (as auth-js's `listFactors` and
    /// `getAuthenticatorAssuranceLevel`).
    public enum ListFactors: RPCMethod {
        public static let name = "mfa.factors"
        public typealias Parameters = ProfileParameters
        /// The factors and levels.
        public struct Result: Codable, Sendable, Equatable {
            /// The profile.
            public var profile: String
            /// Every factor, verified or not.
            public var factors: [Factor]
            /// The session's current level (`aal1`, `aal2`); absent when its token does not say.
            public var aal: String?
            /// The level it can reach: `aal2` once the user has a verified factor.
            public var nextAal: String?
            /// Creates a result.
            public init(profile: String, factors: [Factor], aal: String?, nextAal: String?) {
                self.profile = profile
                self.factors = factors
                self.aal = aal
                self.nextAal = nextAal
            }
            enum CodingKeys: String, CodingKey { case profile, factors, aal, nextAal = "next_aal" }
        }
        /// One factor.
        public struct Factor: Codable, Sendable, Equatable {
            /// Its id.
            public var id: String
            /// `totp`, `phone`, or another type the server knows.
            public var type: String
            /// The name the user gave it.
            public var friendlyName: String?
            /// `verified` or `unverified`.
            public var status: String
            /// For a phone factor: the number.
            public var phone: String?
            /// When it was enrolled (ISO 8601, as the server wrote it).
            public var createdAt: String?
            /// Creates a factor.
            public init(id: String, type: String, friendlyName: String?, status: String, phone: String? = nil, createdAt: String? = nil) {
                self.id = id
                self.type = type
                self.friendlyName = friendlyName
                self.status = status
                self.phone = phone
                self.createdAt = createdAt
            }
            enum CodingKeys: String, CodingKey {
                case id, type, friendlyName = "friendly_name", status, phone, createdAt = "created_at"
            }
        }
    }
}
