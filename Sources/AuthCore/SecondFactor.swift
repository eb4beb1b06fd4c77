import FoundationEssentials
import FoundationGaps

/// A kind of second factor authd enrolls (GoTrue's `factor_type`).
public enum FactorKind: String, Sendable, Equatable, CaseIterable {
    /// A time-based one-time password from an authenticator app (RFC 6238).
    case totp
    /// A code sent by SMS (or WhatsApp) to a phone number.
    case phone
}

/// A verified second factor of the user, as kept with the session: enough to say that the user
/// has one and which to challenge. Holds no secret.
public struct FactorSummary: Sendable, Equatable, Codable {
    /// The factor's id (a UUID).
    public var id: String
    /// Its `factor_type` as the server names it (`totp`, `phone`, `webauthn`, …).
    public var type: String
    /// The name the user gave it, if any.
    public var friendlyName: String?

    /// Creates a summary.
    public init(id: String, type: String, friendlyName: String? = nil) {
        self.id = id
        self.type = type
        self.friendlyName = friendlyName
    }
}

/// What to enroll (`POST /factors`).
public struct FactorEnrollmentRequest: Sendable, Equatable {
    /// The kind of factor.
    public var kind: FactorKind
    /// A name to tell it apart from the user's other factors.
    public var friendlyName: String?
    /// For TOTP: the issuer the authenticator app shows (the server's host when nil).
    public var issuer: String?
    /// For a phone factor: the number, in E.164 form.
    public var phone: String?

    /// Creates a request.
    public init(kind: FactorKind, friendlyName: String? = nil, issuer: String? = nil, phone: String? = nil) {
        self.kind = kind
        self.friendlyName = friendlyName
        self.issuer = issuer
        self.phone = phone
    }
}

/// A factor the server has just enrolled, unverified until a challenge of it is verified.
/// The description leaves out the TOTP secret.
public struct FactorEnrollment: Sendable, Equatable, CustomStringConvertible {
    /// The factor's id.
    public var id: String
    /// Its `factor_type`.
    public var type: String
    /// The name the user gave it.
    public var friendlyName: String?
    /// For TOTP: what the authenticator app needs.
    public var totp: TOTPSetup?
    /// For a phone factor: the number codes go to.
    public var phone: String?

    /// Creates an enrollment.
    public init(id: String, type: String, friendlyName: String? = nil, totp: TOTPSetup? = nil, phone: String? = nil) {
        self.id = id
        self.type = type
        self.friendlyName = friendlyName
        self.totp = totp
        self.phone = phone
    }

    /// The factor's id and type, never its secret.
    public var description: String { "FactorEnrollment(id: \(id), type: \(type))" }
}

/// The shared secret of a TOTP factor, as the server hands it out once, at enrollment. It goes
/// to the user who asked for it and nowhere else: never into a log or the keyring.
public struct TOTPSetup: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The `otpauth://totp/…` URI an authenticator app reads (it contains the secret).
    public var uri: String
    /// The secret in base32, for typing it in.
    public var secret: String
    /// The server's QR code of the URI, an SVG document.
    public var qrCode: String?

    /// Creates the setup.
    public init(uri: String, secret: String, qrCode: String? = nil) {
        self.uri = uri
        self.secret = secret
        self.qrCode = qrCode
    }

    /// Redacted.
    public var description: String { "TOTPSetup(<redacted>)" }

    /// No children, so that `dump` of anything holding a setup (a sign-in page's step, an
    /// enrolment's outcome) shows the redacted description, not the secret.
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// A challenge of a factor (`POST /factors/{id}/challenge`): its code is verified against it.
public struct FactorChallenge: Sendable, Equatable {
    /// The challenge's id.
    public var id: String
    /// The factor's type.
    public var type: String
    /// When the server stops accepting a code for it (Unix seconds, the server's clock).
    public var expiresAt: Int64?

    /// Creates a challenge.
    public init(id: String, type: String, expiresAt: Int64?) {
        self.id = id
        self.type = type
        self.expiresAt = expiresAt
    }
}

/// The ids of factors and challenges as GoTrue writes them: UUIDs. They go into request paths
/// (`/factors/{id}/verify`), so nothing but the canonical form may pass.
public enum FactorID {
    /// `text` in lower case when it is exactly 36 ASCII characters in the 8-4-4-4-12 hex form of
    /// a UUID; nil for anything else (a NUL, a sign, spaces, path characters, another length).
    /// The same reading as the wire's parameter rules (`UUIDText`), so what they let through is sent.
    public static func canonical(_ text: String) -> String? { UUIDText.canonical(text) }
}
