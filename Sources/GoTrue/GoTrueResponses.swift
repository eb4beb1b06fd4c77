import AuthCore
import FoundationEssentials
import FoundationGaps

/// GoTrue's answers as authd reads them, and what each becomes. Lenient where GoTrue's lists
/// may grow: one entry of a kind this client does not know is left out, not fatal.
enum Answer {
    /// A session: `/token`, `/verify`, `/signup` when it signs in, `/factors/{id}/verify`.
    struct Session: Decodable {
        var access_token: String
        var refresh_token: String
        var expires_in: WholeNumber?
        var user: User

        /// The grant `data` holds; its `expires_in` must be one of `acceptedLifetimes`.
        static func grant(_ data: Data) throws(ServerFailure) -> SessionGrant {
            let answer: Session
            do { answer = try JSONDecoder().decode(Session.self, from: data) } catch {
                throw .invalidResponse(detail: "the session in the answer is incomplete")
            }
            guard let expiresIn = answer.expires_in?.value, GoTrueClient.acceptedLifetimes.contains(expiresIn) else {
                throw .invalidResponse(detail: "the session's expires_in is not a whole number of seconds from 1 to 31536000 (a year)")
            }
            return SessionGrant(accessToken: answer.access_token, refreshToken: answer.refresh_token, expiresIn: expiresIn,
                                user: answer.user.summary)
        }

        /// Whether `data` is a session rather than a bare user (`/signup` answers either).
        static func isSession(_ data: Data) -> Bool {
            (try? JSONValue(parsing: data))?["access_token"] != nil
        }
    }

    /// A JSON value that may be a whole number. Anything else (a fraction, a string, a number no
    /// integer type holds such as `1e400`) decodes to a nil `value` instead of failing the whole
    /// answer, so that the range check can say what is wrong.
    struct WholeNumber: Decodable {
        var value: Int?

        init(from decoder: any Decoder) {
            value = try? decoder.singleValueContainer().decode(Int.self)
        }
    }

    /// The user object: alone from `/user` and `/signup`, inside every session.
    struct User: Decodable {
        var id: String
        var email: String?
        var phone: String?
        var factors: [Lenient<Factor>]?
        var is_anonymous: Bool?
        /// Not an array at all reads as none: the identities are only listed, never needed.
        var identities: Lenient<[Lenient<Identity>]>?

        /// The record `data` holds.
        static func record(_ data: Data) throws(ServerFailure) -> UserRecord {
            guard let user = try? JSONDecoder().decode(User.self, from: data) else {
                throw .invalidResponse(detail: "the user in the answer is incomplete")
            }
            let factors = (user.factors ?? []).compactMap(\.value).compactMap(\.listed)
            let identities = (user.identities?.value ?? []).compactMap(\.value).compactMap(\.linked)
            return UserRecord(summary: user.summary, json: data, factors: factors, identities: identities)
        }

        /// What authd keeps: the verified factors among those listed (GoTrue lists a user's
        /// factors with every user object once there are any).
        var summary: UserSummary {
            let verified = (factors ?? []).compactMap(\.value).filter { $0.status == "verified" }
                .map { FactorSummary(id: $0.id, type: $0.factor_type ?? "unknown", friendlyName: nonEmpty($0.friendly_name)) }
            return UserSummary(id: id, email: nonEmpty(email), phone: nonEmpty(phone), verifiedFactors: verified,
                               isAnonymous: is_anonymous ?? false)
        }
    }

    /// An entry of the user's `factors`.
    struct Factor: Decodable {
        var id: String
        var factor_type: String?
        var status: String?
        var friendly_name: String?
        /// The members only the list shows; nil when one is of another type, and the factor then
        /// counts (when verified) but is not listed.
        var details: Details?

        struct Details: Decodable {
            var phone: String?
            var created_at: String?
        }

        private enum CodingKeys: String, CodingKey { case id, factor_type, status, friendly_name }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            factor_type = try container.decodeIfPresent(String.self, forKey: .factor_type)
            status = try container.decodeIfPresent(String.self, forKey: .status)
            friendly_name = try container.decodeIfPresent(String.self, forKey: .friendly_name)
            details = try? Details(from: decoder)
        }

        /// The factor as `factors.list` shows it.
        var listed: ListedFactor? {
            details.map { details in
                ListedFactor(id: id, type: factor_type ?? "unknown", friendlyName: nonEmpty(friendly_name), status: status ?? "unknown",
                             phone: nonEmpty(details.phone), createdAt: details.created_at)
            }
        }
    }

    /// An entry of the user's `identities`.
    struct Identity: Decodable {
        var identity_id: String?
        var provider: String
        var email: String?
        var identity_data: IdentityData?
        var created_at: String?
        var last_sign_in_at: String?

        struct IdentityData: Decodable { var email: String? }

        /// The identity as `identities.list` shows it; nil without an id or a provider.
        var linked: LinkedIdentity? {
            guard let id = identity_id, !id.isEmpty, !provider.isEmpty else { return nil }
            return LinkedIdentity(id: id, provider: provider, email: nonEmpty(email ?? identity_data?.email), createdAt: created_at,
                                  lastSignInAt: last_sign_in_at)
        }
    }

    /// `POST /factors`.
    struct Enrollment: Decodable {
        var id: String
        var type: String?
        var friendly_name: String?
        var phone: String?
        var totp: TOTPAnswer?

        struct TOTPAnswer: Decodable {
            var qr_code: String?
            var secret: String?
            var uri: String?
        }

        /// The enrollment `data` holds for `request`; a TOTP factor must come with its URI.
        static func enrollment(_ data: Data, for request: FactorEnrollmentRequest) throws(ServerFailure) -> FactorEnrollment {
            guard let answer = try? JSONDecoder().decode(Enrollment.self, from: data), !answer.id.isEmpty else {
                throw .invalidResponse(detail: "the enrolled factor in the answer is incomplete")
            }
            let totp = answer.totp.flatMap { totp in totp.uri.map { TOTPSetup(uri: $0, secret: totp.secret ?? "", qrCode: totp.qr_code) } }
            if request.kind == .totp, totp == nil { throw .invalidResponse(detail: "the enrolled TOTP factor comes without its otpauth URI") }
            return FactorEnrollment(id: answer.id, type: answer.type ?? request.kind.rawValue, friendlyName: nonEmpty(answer.friendly_name),
                                    totp: totp, phone: nonEmpty(answer.phone))
        }
    }

    /// `POST /factors/{id}/challenge`.
    struct Challenge: Decodable {
        var id: String
        var type: String?
        var expires_at: WholeNumber?

        /// The challenge `data` holds.
        static func challenge(_ data: Data) throws(ServerFailure) -> FactorChallenge {
            guard let answer = try? JSONDecoder().decode(Challenge.self, from: data), !answer.id.isEmpty else {
                throw .invalidResponse(detail: "the challenge in the answer is incomplete")
            }
            return FactorChallenge(id: answer.id, type: answer.type ?? "", expiresAt: answer.expires_at?.value.map(Int64.init))
        }
    }

    /// `{"url": …}`, as GoTrue answers a request with `skip_http_redirect`.
    struct Redirect: Decodable {
        var url: String

        /// The URL `data` holds, which must be absolute.
        static func url(_ data: Data) throws(ServerFailure) -> URL {
            guard let answer = try? JSONDecoder().decode(Redirect.self, from: data), let url = URL(string: answer.url),
                  url.scheme != nil else {
                throw .invalidResponse(detail: "the answer carries no URL to open")
            }
            return url
        }
    }
}

/// `text`, unless it is absent or empty.
func nonEmpty(_ text: String?) -> String? {
    guard let text, !text.isEmpty else { return nil }
    return text
}
