import FoundationEssentials

/// Where a one-time code is sent and whom it identifies: an email address or a phone number.
public enum ContactAddress: Sendable, Equatable, CustomStringConvertible {
    /// An email address.
    case email(String)
    /// A phone number in E.164 form (`+15551234567`).
    case phone(String)

    /// The address itself.
    public var value: String {
        switch self {
        case .email(let address), .phone(let address): return address
        }
    }

    /// The JSON field GoTrue expects the address in: `email` or `phone`.
    public var field: String {
        switch self {
        case .email: return "email"
        case .phone: return "phone"
        }
    }

    /// The address, for messages (it is the user's own, not a secret).
    public var description: String { value }
}

/// What a one-time code was sent for, as `POST /verify` names it.
public enum OTPType: String, Sendable, Equatable, CaseIterable {
    /// A sign-in code or magic link sent by email (also confirms a sign-up).
    case email
    /// A sign-in code sent by SMS.
    case sms
    /// The confirmation of a sign-up.
    case signup
    /// A magic link's code.
    case magiclink
    /// A password recovery code: signs in so the password can be changed.
    case recovery
    /// The confirmation of a new email address.
    case emailChange = "email_change"
    /// The confirmation of a new phone number.
    case phoneChange = "phone_change"
}

/// A way to obtain a session from GoTrue's `/token`, `/verify` or `/signup`. The description is redacted.
public enum SignInCredential: Sendable, Equatable, CustomStringConvertible {
    /// `grant_type=password` with an email or phone.
    case password(ContactAddress, password: String)
    /// `POST /verify` with a one-time code.
    case oneTimeCode(ContactAddress, code: String, type: OTPType)
    /// `grant_type=id_token`: an OpenID Connect ID token from Google, Apple, … The nonce is the
    /// raw one (GoTrue compares its SHA-256 hex with the token's `nonce` claim).
    case idToken(provider: String, idToken: String, accessToken: String?, nonce: String?)
    /// `grant_type=pkce`: the code from a browser redirect and the verifier kept since `/authorize`.
    case authorizationCode(code: String, codeVerifier: String)
    /// `POST /signup` with neither email nor phone: a new anonymous user (`is_anonymous`), with
    /// `metadata` (a JSON object) as its `user_metadata`.
    case anonymous(metadata: Data?)
    /// `POST /verify` with the `token_hash` an email link carried (GoTrue's `{{ .TokenHash }}`).
    case tokenHash(String, type: OTPType)
    /// `grant_type=refresh_token` with a refresh token an app held until now: the session it
    /// belongs to moves to authd. The exchange rotates the token, so the app's copy is spent.
    case refreshToken(String)

    /// The kind of credential, never its secret parts.
    public var description: String {
        switch self {
        case .password(let address, _): return "password(\(address.field))"
        case .oneTimeCode(let address, _, let type): return "oneTimeCode(\(address.field), \(type.rawValue))"
        case .idToken(let provider, _, _, _): return "idToken(\(provider))"
        case .authorizationCode: return "authorizationCode"
        case .tokenHash(_, let type): return "tokenHash(\(type.rawValue))"
        case .anonymous: return "anonymous"
        case .refreshToken: return "refreshToken"
        }
    }
}

/// A sign-up request (`POST /signup`).
public struct SignUpRequest: Sendable, Equatable {
    /// The new account's email or phone.
    public var address: ContactAddress
    /// Its password.
    public var password: String
    /// Initial `user_metadata`, as a JSON object.
    public var metadata: Data?
    /// Where the confirmation link leads back to, with a PKCE challenge; nil for GoTrue's default.
    public var link: EmailLink?

    /// Creates a sign-up request.
    public init(address: ContactAddress, password: String, metadata: Data? = nil, link: EmailLink? = nil) {
        self.address = address
        self.password = password
        self.metadata = metadata
        self.link = link
    }
}

/// Where an emailed link leads back to (`redirect_to`), with the PKCE challenge of the flow that
/// waits for it (`code_challenge`, method `s256`): GoTrue's link then comes back with a `code`.
public struct EmailLink: Sendable, Equatable {
    /// A loopback URL or an app's custom scheme.
    public var redirectTo: String
    /// The S256 challenge of the waiting flow's verifier.
    public var codeChallenge: String

    /// Creates a link target.
    public init(redirectTo: String, codeChallenge: String) {
        self.redirectTo = redirectTo
        self.codeChallenge = codeChallenge
    }
}

/// A message to send again (`POST /resend`): a sign-up's confirmation or an address change's.
public struct ResendRequest: Sendable, Equatable {
    /// What the message confirms.
    public enum Purpose: String, Sendable, Equatable, CaseIterable {
        /// An email sign-up (`signup`).
        case signup
        /// A phone sign-up (`sms`).
        case sms
        /// A new email address (`email_change`).
        case emailChange = "email_change"
        /// A new phone number (`phone_change`).
        case phoneChange = "phone_change"
    }
    /// Where it goes.
    public var address: ContactAddress
    /// What it confirms.
    public var purpose: Purpose

    /// Creates a request.
    public init(address: ContactAddress, purpose: Purpose) {
        self.address = address
        self.purpose = purpose
    }
}

/// Which enterprise SSO (SAML) provider signs the user in (`POST /sso`).
public enum SingleSignOnTarget: Sendable, Equatable {
    /// The provider registered for the email domain (`domain`).
    case domain(String)
    /// The provider with this id (`provider_id`).
    case provider(String)
}

/// What `POST /signup` gave back.
public enum SignUpOutcome: Sendable, Equatable {
    /// The project confirms automatically: a session.
    case signedIn(SessionGrant)
    /// The project requires confirmation: a code or link was sent to the address.
    case confirmationSent(UserSummary)
}

/// A one-time code to send (`POST /otp` or `POST /recover`).
public enum CodeRequest: Sendable, Equatable {
    /// A sign-in code (magic link / OTP) by email or SMS; `createUser` signs up unknown addresses.
    case signIn(ContactAddress, createUser: Bool)
    /// A password recovery code by email.
    case recovery(email: String)
}

/// Changes to the signed-in user (`PUT /user`). Nil fields are left alone.
public struct UserChanges: Sendable, Equatable, CustomStringConvertible {
    /// A new email address (confirmed by a code unless the project confirms automatically).
    public var email: String?
    /// A new phone number.
    public var phone: String?
    /// A new password.
    public var password: String?
    /// Keys to merge into `user_metadata`, as a JSON object.
    public var metadata: Data?
    /// The code `GET /reauthenticate` sent, for a project that asks for one before a password
    /// change (GoTrue's `nonce`). Not a change by itself.
    public var nonce: String?

    /// Creates a change set.
    public init(email: String? = nil, phone: String? = nil, password: String? = nil, metadata: Data? = nil, nonce: String? = nil) {
        self.email = email
        self.phone = phone
        self.password = password
        self.metadata = metadata
        self.nonce = nonce
    }

    /// Whether nothing would change.
    public var isEmpty: Bool { email == nil && phone == nil && password == nil && metadata == nil }

    /// Which fields change, never the password or the code.
    public var description: String {
        [email.map { _ in "email" }, phone.map { _ in "phone" }, password.map { _ in "password" }, metadata.map { _ in "data" }]
            .compactMap { $0 }.joined(separator: ",")
    }
}
