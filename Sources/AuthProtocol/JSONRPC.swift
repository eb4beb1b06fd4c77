import FoundationEssentials

/// The protocol version spoken on the socket. Major changes break clients; minor ones add fields.
public enum ProtocolVersion {
    /// The current version, `major.minor`.
    public static let current = "1.0"
}

/// The software version of authd, authctl and the client library, reported by `hello`.
public enum AuthdVersion {
    /// The version string.
    public static let string = "0.1.0"
}

extension RPCID: Codable {
    /// Decodes a number or a string.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int64.self) { self = .number(number); return }
        self = .string(try container.decode(String.self))
    }

    /// Encodes the number or string.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        }
    }
}

/// A JSON-RPC error object.
public struct RPCErrorObject: Codable, Sendable, Equatable, Error {
    /// The numeric code: the standard -327xx ones, or `applicationError` with a `data.reason`.
    public var code: Int
    /// A one-line message for people, saying what to do next.
    public var message: String
    /// Machine-readable details.
    public var data: RPCErrorData?

    /// Creates an error object.
    public init(code: Int, message: String, data: RPCErrorData? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    /// -32700: the line is not JSON.
    public static let parseErrorCode = -32700
    /// -32600: JSON, but not a JSON-RPC 2.0 request.
    public static let invalidRequestCode = -32600
    /// -32601: no such method.
    public static let methodNotFoundCode = -32601
    /// -32602: the parameters do not fit the method.
    public static let invalidParamsCode = -32602
    /// -32603: the daemon failed inside.
    public static let internalErrorCode = -32603
    /// -32000: an application error; `data.reason` says which.
    public static let applicationErrorCode = -32000

    /// An application error with a stable reason.
    public static func application(_ reason: ErrorReason, _ message: String) -> RPCErrorObject {
        RPCErrorObject(code: applicationErrorCode, message: message, data: RPCErrorData(reason: reason.rawValue))
    }

    /// The reason, when the daemon gave one this client knows.
    public var reason: ErrorReason? { data?.reason.flatMap(ErrorReason.init(rawValue:)) }
}

/// The `data` member of an error.
public struct RPCErrorData: Codable, Sendable, Equatable {
    /// A stable reason code (see `ErrorReason`). Clients must accept reasons they do not know.
    public var reason: String?
    /// Creates error data.
    public init(reason: String?) { self.reason = reason }
}

/// Stable reasons carried in `error.data.reason`.
public enum ErrorReason: String, Sendable, Codable, CaseIterable {
    /// No session: sign in with `authctl login`.
    case notSignedIn = "not_signed_in"
    /// The server cannot be reached and the token has expired.
    case offline
    /// The server keeps failing (5xx) and the token has expired.
    case serverError = "server_error"
    /// The server rate-limits us and the token has expired.
    case rateLimited = "rate_limited"
    /// The email or password is wrong.
    case invalidCredentials = "invalid_credentials"
    /// The server refused a sign-in for another reason (the message says which).
    case signInRejected = "sign_in_rejected"
    /// The project protects this call with a CAPTCHA and no token, or a refused one, came with
    /// it: pass `captcha_token`, or sign in through the browser, which the CAPTCHA does not cover.
    case captchaRequired = "captcha_required"
    /// The request needs a session raised with a second factor (`aal2`) and this one is not:
    /// verify one with `mfa.verify` (`authctl mfa verify`), then ask again.
    case mfaRequired = "mfa_required"
    /// The keyring could not be used.
    case keyringUnavailable = "keyring_unavailable"
    /// The requested minimum validity exceeds the token lifetime.
    case minValidityTooLong = "min_validity_too_long"
    /// The named profile does not exist.
    case unknownProfile = "unknown_profile"
    /// A one-time code was wrong, expired or already used.
    case codeRejected = "code_rejected"
    /// An ID token was refused (signature, audience, nonce, expiry).
    case idTokenRejected = "id_token_rejected"
    /// A browser sign-in failed: the provider refused, or the code or verifier did not match.
    case oauthFailed = "oauth_failed"
    /// A browser sign-in (or a sign-in page) was not completed in time.
    case flowExpired = "flow_expired"
    /// The user cancelled the sign-in page (or an app did, with `session.cancelInteractiveSignIn`).
    case signInCancelled = "sign_in_cancelled"
    /// The sign-in page could not go on (the project's settings could not be read, it offers no
    /// way to sign in, the session it signed in ended), or could not be served: the message says which.
    case signInFailed = "sign_in_failed"
    /// The server refused a change to the user (the message says why).
    case requestRejected = "request_rejected"
    /// The project wants a code before the password changes: call `user.reauthenticate`, then
    /// `user.update` again with the code as `nonce`.
    case reauthenticationNeeded = "reauthentication_needed"
    /// This client may not use authd: it runs as another user. Sent once, before the daemon
    /// closes the connection without reading from it.
    case accessDenied = "access_denied"
    /// authd is serving its maximum number of connections. Sent once, then the connection closes.
    case busy
    /// The connection sent nothing for the idle timeout while not subscribed. Sent once, then
    /// the connection closes; reconnecting is always fine.
    case idleTimeout = "idle_timeout"
    /// The client left too many answers and events unread. Sent once, then the connection closes;
    /// a subscriber reconnects and subscribes again.
    case tooSlow = "too_slow"
    /// The user denied this app the profile's tokens (`authctl apps deny`).
    case appDenied = "app_denied"
    /// The profile asks before an app gets tokens, and nobody decided in time.
    case approvalTimeout = "approval_timeout"
}

/// Any inbound line after the envelope was checked: the method name, its params when they were
/// read with it (`RPCCodec.decodeRequest`), and the raw line.
public struct RPCRequestEnvelope: Sendable {
    /// The id; nil for a notification.
    public var id: RPCID?
    /// The method name.
    public var method: String
    /// The raw line, from which the params are decoded when they were not read with the envelope.
    public var raw: Data
    /// The params as the method's parameter type, or why they could not be read; nil when the
    /// reader was given no type for the method.
    public var parameters: Result<any Sendable, any Error>?

    /// Creates an envelope.
    public init(id: RPCID?, method: String, raw: Data, parameters: Result<any Sendable, any Error>? = nil) {
        self.id = id
        self.method = method
        self.raw = raw
        self.parameters = parameters
    }
}

/// An outbound notification (an event).
public struct RPCNotification<Params: Encodable & Sendable>: Encodable, Sendable {
    /// Always "2.0".
    public let jsonrpc = "2.0"
    /// The notification name.
    public var method: String
    /// Its parameters.
    public var params: Params

    /// Creates a notification.
    public init(method: String, params: Params) {
        self.method = method
        self.params = params
    }
}
