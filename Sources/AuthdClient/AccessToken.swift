import AuthProtocol
import FoundationEssentials

/// A bearer token from authd, with its expiry. Its description never shows the token.
public struct AccessToken: Sendable, Equatable, CustomStringConvertible {
    /// The JWT to send as `Authorization: Bearer <value>`.
    public let value: String
    /// When the token expires, on the daemon's clock.
    public let expiresAt: Date

    /// Wraps a token answer.
    init(_ result: Methods.Token.Result) {
        value = result.accessToken
        expiresAt = Date(timeIntervalSince1970: TimeInterval(result.expiresAt))
    }

    /// The `Authorization` header value: `Bearer <token>`.
    public var authorizationHeader: String { "Bearer \(value)" }

    /// Redacted, so that logging the struct leaks nothing.
    public var description: String { "AccessToken(redacted, expires \(expiresAt))" }
}
