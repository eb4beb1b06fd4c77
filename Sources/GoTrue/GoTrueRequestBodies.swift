import AuthCore
import FoundationEssentials
import FoundationGaps

/// A request body: the members a GoTrue endpoint takes, by the API's names. A nil member is left
/// out of the body, as GoTrue reads an absent member as "not given".
///
/// Members rather than `Encodable`: one encoder for every body, where synthesized conformances
/// cost each body a coding-keys enum and its witness tables in the installed daemon.
protocol RequestBodyMembers {
    /// The body's members, nil where not given.
    var members: [(String, JSONValue?)] { get }
}

extension RequestBodyMembers {
    /// The body as a JSON object, without its nil members.
    var object: JSONValue {
        var object: [String: JSONValue] = [:]
        for case let (name, value?) in members { object[name] = value }
        return .object(object)
    }
}

/// The JSON bodies GoTrue's endpoints take, member for member as the API names them.
enum RequestBody {
    /// A body that GoTrue's CAPTCHA check may guard and an emailed link may come back from: `Body`'s
    /// members, with `gotrue_meta_security.captcha_token` when there is a CAPTCHA token and the
    /// link's PKCE challenge (`code_challenge`, `code_challenge_method`) when there is a link.
    struct Guarded<Body: RequestBodyMembers>: RequestBodyMembers {
        var body: Body
        var captchaToken: String?
        var link: EmailLink?

        var members: [(String, JSONValue?)] {
            body.members + [
                ("gotrue_meta_security", captchaToken.map { .object(["captcha_token": .string($0)]) }),
                ("code_challenge", link.map { .string($0.codeChallenge) }),
                ("code_challenge_method", link.map { _ in .string("s256") }),
            ]
        }
    }

    /// `POST /token?grant_type=password`.
    struct PasswordGrant: RequestBodyMembers {
        var email: String?
        var phone: String?
        var password: String

        var members: [(String, JSONValue?)] { [("email", .text(email)), ("phone", .text(phone)), ("password", .text(password))] }
    }

    /// `POST /verify`: a one-time code for an address, or an email link's token hash.
    struct Verify: RequestBodyMembers {
        var email: String?
        var phone: String?
        var token: String?
        var tokenHash: String?
        var type: String

        var members: [(String, JSONValue?)] {
            [("email", .text(email)), ("phone", .text(phone)), ("token", .text(token)), ("token_hash", .text(tokenHash)),
             ("type", .text(type))]
        }
    }

    /// `POST /token?grant_type=id_token`.
    struct IDTokenGrant: RequestBodyMembers {
        var provider: String
        var idToken: String
        var accessToken: String?
        var nonce: String?

        var members: [(String, JSONValue?)] {
            [("provider", .text(provider)), ("id_token", .text(idToken)), ("access_token", .text(accessToken)),
             ("nonce", .text(nonce))]
        }
    }

    /// `POST /token?grant_type=pkce`.
    struct PKCEGrant: RequestBodyMembers {
        var authCode: String
        var codeVerifier: String

        var members: [(String, JSONValue?)] { [("auth_code", .text(authCode)), ("code_verifier", .text(codeVerifier))] }
    }

    /// `POST /token?grant_type=refresh_token`.
    struct RefreshGrant: RequestBodyMembers {
        var refreshToken: String

        var members: [(String, JSONValue?)] { [("refresh_token", .text(refreshToken))] }
    }

    /// `POST /signup`: an address and password, or neither for an anonymous user; `data` becomes
    /// the user's `user_metadata`.
    struct SignUp: RequestBodyMembers {
        var email: String?
        var phone: String?
        var password: String?
        var data: JSONValue?

        var members: [(String, JSONValue?)] { [("email", .text(email)), ("phone", .text(phone)), ("password", .text(password)), ("data", data)] }
    }

    /// `POST /otp`.
    struct OneTimeCode: RequestBodyMembers {
        var email: String?
        var phone: String?
        var createUser: Bool

        var members: [(String, JSONValue?)] { [("email", .text(email)), ("phone", .text(phone)), ("create_user", .bool(createUser))] }
    }

    /// `POST /recover`.
    struct Recover: RequestBodyMembers {
        var email: String

        var members: [(String, JSONValue?)] { [("email", .text(email))] }
    }

    /// `POST /resend`.
    struct Resend: RequestBodyMembers {
        var email: String?
        var phone: String?
        var type: String

        var members: [(String, JSONValue?)] { [("email", .text(email)), ("phone", .text(phone)), ("type", .text(type))] }
    }

    /// `PUT /user`.
    struct UserUpdate: RequestBodyMembers {
        var email: String?
        var phone: String?
        var password: String?
        var nonce: String?
        var data: JSONValue?

        var members: [(String, JSONValue?)] {
            [("email", .text(email)), ("phone", .text(phone)), ("password", .text(password)), ("nonce", .text(nonce)), ("data", data)]
        }
    }

    /// `POST /factors`.
    struct FactorEnroll: RequestBodyMembers {
        var factorType: String
        var friendlyName: String?
        var issuer: String?
        var phone: String?

        var members: [(String, JSONValue?)] {
            [("factor_type", .text(factorType)), ("friendly_name", .text(friendlyName)), ("issuer", .text(issuer)),
             ("phone", .text(phone))]
        }
    }

    /// `POST /factors/{id}/challenge`.
    struct FactorChallenge: RequestBodyMembers {
        var channel: String?

        var members: [(String, JSONValue?)] { [("channel", .text(channel))] }
    }

    /// `POST /factors/{id}/verify`.
    struct FactorVerify: RequestBodyMembers {
        var challengeID: String
        var code: String

        var members: [(String, JSONValue?)] { [("challenge_id", .text(challengeID)), ("code", .text(code))] }
    }

    /// `POST /sso` with `skip_http_redirect`, so that GoTrue answers the URL as JSON.
    struct SingleSignOn: RequestBodyMembers {
        var domain: String?
        var providerID: String?
        var redirectTo: String
        var codeChallenge: String

        var members: [(String, JSONValue?)] {
            [("domain", .text(domain)), ("provider_id", .text(providerID)), ("redirect_to", .text(redirectTo)),
             ("code_challenge", .text(codeChallenge)), ("code_challenge_method", .text("s256")), ("skip_http_redirect", .bool(true))]
        }
    }
}

extension JSONValue {
    /// A string member, or none when `string` is nil.
    static func text(_ string: String?) -> JSONValue? { string.map(JSONValue.string) }
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
