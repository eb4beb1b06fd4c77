import Foundation

/// An MFA factor of a user (GoTrue's `mfa_factors` row): a TOTP authenticator or a phone that
/// receives codes by SMS.
struct DevFactor: Sendable {
    /// The two factor types this server enrolls (GoTrue's third, `webauthn`, needs a browser).
    enum Kind: String, Sendable {
        case totp, phone

        /// The `amr` method a verification of this type adds to the session. GoTrue's names are
        /// not symmetrical: TOTP is `totp`, a phone is `mfa/phone`.
        var amrMethod: String {
            switch self {
            case .totp: "totp"
            case .phone: "mfa/phone"
            }
        }
    }

    var id: String
    var kind: Kind
    /// Empty when the client gave none: GoTrue stores it as given, so two unnamed factors conflict.
    var friendlyName: String
    /// Verified once a challenge of it was answered correctly.
    var verified = false
    /// The TOTP secret, base32 without padding; empty for a phone factor.
    var secret = ""
    /// The phone number, digits only as GoTrue stores it; empty for a TOTP factor.
    var phone = ""
    var createdAt: Date
    var updatedAt: Date
    var lastChallengedAt: Date?

    /// The factor as GoTrue's user object lists it: `friendly_name` left out when empty, `phone`
    /// always there (empty for TOTP), `last_challenged_at` null until the first challenge.
    var json: [String: Any] {
        var json: [String: Any] = [
            "id": id, "factor_type": kind.rawValue, "status": verified ? "verified" : "unverified",
            "created_at": DevAuthAPI.timestamp(createdAt), "updated_at": DevAuthAPI.timestamp(updatedAt), "phone": phone,
            "last_challenged_at": lastChallengedAt.map(DevAuthAPI.timestamp) ?? NSNull(),
        ]
        if !friendlyName.isEmpty { json["friendly_name"] = friendlyName }
        return json
    }
}

/// A challenge of a factor (GoTrue's `mfa_challenges` row), answered by `POST /factors/{id}/verify`.
struct DevChallenge: Sendable {
    var id: String
    var factorID: String
    var createdAt: Date
    /// Set when answered: a challenge works once.
    var verifiedAt: Date?
    /// The code sent by SMS for a phone factor; nil for TOTP, whose code comes from the secret.
    var otpCode: String?
}
