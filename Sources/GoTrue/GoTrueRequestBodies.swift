import AuthCore
import FoundationEssentials
import FoundationGaps

/// The JSON bodies GoTrue's endpoints take, member for member as the API names them. A nil
/// member is left out of the body, as GoTrue reads an absent member as "not given".
enum RequestBody {
    /// A body that GoTrue's CAPTCHA check may guard and an emailed link may come back from: `Body`'s
    /// members, with `gotrue_meta_security.captcha_token` when there is a CAPTCHA token and the
    /// link's PKCE challenge (`code_challenge`, `code_challenge_method`) when there is a link.
    struct Guarded<Body: Encodable>: Encodable {
        var body: Body
        var captchaToken: String?
        var link: EmailLink?

        private enum Keys: String, CodingKey {
            case security = "gotrue_meta_security", codeChallenge = "code_challenge", codeChallengeMethod = "code_challenge_method"
        }
        private struct Security: Encodable { var captcha_token: String }

        func encode(to encoder: any Encoder) throws {
            try body.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            if let captchaToken { try container.encode(Security(captcha_token: captchaToken), forKey: .security) }
            if let link {
                try container.encode(link.codeChallenge, forKey: .codeChallenge)
                try container.encode("s256", forKey: .codeChallengeMethod)
            }
        }
    }

    /// `POST /token?grant_type=password`.
    struct PasswordGrant: Encodable {
        var email: String?
        var phone: String?
        var password: String
    }

    /// `POST /verify`: a one-time code for an address, or an email link's token hash.
    struct Verify: Encodable {
        var email: String?
        var phone: String?
        var token: String?
        var tokenHash: String?
        var type: String

        private enum CodingKeys: String, CodingKey { case email, phone, token, tokenHash = "token_hash", type }
    }

    /// `POST /token?grant_type=id_token`.
    struct IDTokenGrant: Encodable {
        var provider: String
        var idToken: String
        var accessToken: String?
        var nonce: String?

        private enum CodingKeys: String, CodingKey { case provider, idToken = "id_token", accessToken = "access_token", nonce }
    }

    /// `POST /token?grant_type=pkce`.
    struct PKCEGrant: Encodable {
        var authCode: String
        var codeVerifier: String

        private enum CodingKeys: String, CodingKey { case authCode = "auth_code", codeVerifier = "code_verifier" }
    }

    /// `POST /token?grant_type=refresh_token`.
    struct RefreshGrant: Encodable {
        var refreshToken: String

        private enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
    }

    /// `POST /signup`: an address and password, or neither for an anonymous user; `data` becomes
    /// the user's `user_metadata`.
    struct SignUp: Encodable {
        var email: String?
        var phone: String?
        var password: String?
        var data: JSONValue?
    }

    /// `POST /otp`.
    struct OneTimeCode: Encodable {
        var email: String?
        var phone: String?
        var createUser: Bool

        private enum CodingKeys: String, CodingKey { case email, phone, createUser = "create_user" }
    }

    /// `POST /recover`.
    struct Recover: Encodable {
        var email: String
    }

    /// `POST /resend`.
    struct Resend: Encodable {
        var email: String?
        var phone: String?
        var type: String
    }

    /// `PUT /user`.
    struct UserUpdate: Encodable {
        var email: String?
        var phone: String?
        var password: String?
        var nonce: String?
        var data: JSONValue?
    }

    /// `POST /factors`.
    struct FactorEnroll: Encodable {
        var factorType: String
        var friendlyName: String?
        var issuer: String?
        var phone: String?

        private enum CodingKeys: String, CodingKey { case factorType = "factor_type", friendlyName = "friendly_name", issuer, phone }
    }

    /// `POST /factors/{id}/challenge`.
    struct FactorChallenge: Encodable {
        var channel: String?
    }

    /// `POST /factors/{id}/verify`.
    struct FactorVerify: Encodable {
        var challengeID: String
        var code: String

        private enum CodingKeys: String, CodingKey { case challengeID = "challenge_id", code }
    }

    /// `POST /sso` with `skip_http_redirect`, so that GoTrue answers the URL as JSON.
    struct SingleSignOn: Encodable {
        var domain: String?
        var providerID: String?
        var redirectTo: String
        var codeChallenge: String
        var codeChallengeMethod = "s256"
        var skipHTTPRedirect = true

        private enum CodingKeys: String, CodingKey {
            case domain, providerID = "provider_id", redirectTo = "redirect_to", codeChallenge = "code_challenge",
                 codeChallengeMethod = "code_challenge_method", skipHTTPRedirect = "skip_http_redirect"
        }
    }
}

extension ContactAddress {
    /// The address when it is an email address, for the body member `email`.
    var email: String? {
        if case .email(let email) = self { return email }
        return nil
    }

    /// The number when it is a phone number, for the body member `phone`.
    var phone: String? {
        if case .phone(let phone) = self { return phone }
        return nil
    }
}
