import AuthCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `GoTrueAPI` over HTTP with URLSession.
///
/// Every request carries `apikey` and `X-Supabase-Api-Version: 2024-01-01`, so errors come back
/// as `{"code":"<error_code>","message":…}`; the older `{"error_code":…,"msg":…}` and the OAuth
/// style `{"error":…,"error_description":…}` are understood too.
public struct GoTrueClient: GoTrueAPI {
    /// The auth base URL, e.g. `https://<ref>.supabase.co/auth/v1`.
    public let authURL: URL
    private let anonKey: String
    private let clientInfo: String
    private let session: URLSession

    /// Creates a client for the project at `projectURL` (the Supabase URL, without `/auth/v1`).
    /// `clientInfo` is sent as `X-Client-Info`, as the official clients do.
    public init(projectURL: URL, anonKey: String, clientInfo: String = "authd", timeout: TimeInterval = 15) {
        self.authURL = projectURL.appendingPathComponent("auth").appendingPathComponent("v1")
        self.anonKey = anonKey
        self.clientInfo = clientInfo
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout * 2
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        self.session = URLSession(configuration: configuration)
    }

    /// `POST /token?grant_type=password`.
    public func signIn(email: String, password: String) async throws(ServerFailure) -> SessionGrant {
        let body = try encode(["email": email, "password": password])
        return try decodeGrant(try await send("POST", "token", query: "grant_type=password", body: body))
    }

    /// `POST /token?grant_type=refresh_token`.
    public func refresh(refreshToken: String) async throws(ServerFailure) -> SessionGrant {
        let body = try encode(["refresh_token": refreshToken])
        return try decodeGrant(try await send("POST", "token", query: "grant_type=refresh_token", body: body))
    }

    /// `POST /logout?scope=…`.
    public func signOut(accessToken: String, scope: SignOutScope) async throws(ServerFailure) {
        _ = try await send("POST", "logout", query: "scope=\(scope.rawValue)", body: nil, bearer: accessToken)
    }

    /// `GET /health`; the server's `Date` header, parsed.
    public func health() async throws(ServerFailure) -> Date? {
        let (_, response) = try await exchange("GET", "health", query: nil, body: nil)
        guard let header = response.value(forHTTPHeaderField: "Date") else { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: header)
    }

    // MARK: Plumbing

    private func encode(_ object: [String: String]) throws(ServerFailure) -> Data {
        do { return try JSONSerialization.data(withJSONObject: object) } catch {
            throw .invalidResponse(detail: "request could not be encoded")
        }
    }

    private func send(_ method: String, _ path: String, query: String?, body: Data?, bearer: String? = nil) async throws(ServerFailure) -> Data {
        try await exchange(method, path, query: query, body: body, bearer: bearer).data
    }

    private func exchange(_ method: String, _ path: String, query: String?, body: Data?, bearer: String? = nil) async throws(ServerFailure) -> (data: Data, response: HTTPURLResponse) {
        var components = URLComponents(url: authURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
        components?.percentEncodedQuery = query
        guard let url = components?.url else { throw .invalidResponse(detail: "bad URL") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue(anonKey, forHTTPHeaderField: "apikey")
        request.setValue(GoTrueErrorDecoder.apiVersion, forHTTPHeaderField: GoTrueErrorDecoder.apiVersionHeader)
        request.setValue(clientInfo, forHTTPHeaderField: "X-Client-Info")
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        // No connection reuse. A refresh comes about once an hour, long after any keep-alive
        // connection has gone stale, and when libcurl finds a reused connection closed it resends
        // the POST on a fresh one, which Foundation's URLSession cannot rewind the body for: the
        // request then hangs until the timeout. A fresh connection fails at once instead.
        request.setValue("close", forHTTPHeaderField: "Connection")

        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            // The transport error's text can contain the URL but never the body, so it carries no secret.
            throw .unreachable(url: authURL.absoluteString, detail: Self.describeTransport(error))
        }
        guard let http = response as? HTTPURLResponse else {
            throw .invalidResponse(detail: "not an HTTP response")
        }
        guard (200..<300).contains(http.statusCode) else {
            throw GoTrueErrorDecoder.failure(status: http.statusCode, headers: http.allHeaderFields, body: data)
        }
        return (data, http)
    }

    private func decodeGrant(_ data: Data) throws(ServerFailure) -> SessionGrant {
        do {
            let wire = try JSONDecoder().decode(WireSession.self, from: data)
            return SessionGrant(accessToken: wire.access_token, refreshToken: wire.refresh_token, expiresIn: wire.expires_in,
                                user: UserSummary(id: wire.user.id, email: Self.nonEmpty(wire.user.email), phone: Self.nonEmpty(wire.user.phone)))
        } catch {
            throw .invalidResponse(detail: "the session in the answer is incomplete")
        }
    }

    private static func nonEmpty(_ string: String?) -> String? {
        guard let string, !string.isEmpty else { return nil }
        return string
    }

    private static func describeTransport(_ error: Error) -> String {
        let nsError = error as NSError
        switch nsError.code {
        case NSURLErrorTimedOut: return "timed out"
        case NSURLErrorCannotConnectToHost: return "connection refused"
        case NSURLErrorCannotFindHost: return "host not found"
        case NSURLErrorNotConnectedToInternet: return "no network"
        case NSURLErrorNetworkConnectionLost: return "connection lost"
        default: return nsError.localizedDescription
        }
    }

    private struct WireSession: Decodable {
        var access_token: String
        var refresh_token: String
        var expires_in: Int
        var user: WireUser
    }

    private struct WireUser: Decodable {
        var id: String
        var email: String?
        var phone: String?
    }
}
