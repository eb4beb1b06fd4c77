import Foundation

/// A request as the development server's router sees it.
public struct DevRequest: Sendable {
    /// `GET`, `POST`, …
    public var method: String
    /// The path without the query, e.g. `/auth/v1/token`.
    public var path: String
    /// Query parameters (last one wins).
    public var query: [String: String]
    /// Headers with lower-cased names.
    public var headers: [String: String]
    /// The raw body.
    public var body: Data

    /// Creates a request. `target` is the path with its query.
    public init(method: String, target: String, headers: [String: String], body: Data) {
        self.method = method.uppercased()
        let components = URLComponents(string: target)
        self.path = components?.path ?? target
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }
}

/// A response from the router.
public struct DevResponse: Sendable {
    /// The HTTP status.
    public var status: Int
    /// Extra headers.
    public var headers: [String: String]
    /// The body (JSON unless empty).
    public var body: Data
    /// How long to hold the answer back after the state change is done (fault injection).
    public var delay: TimeInterval = 0
    /// Close the connection instead of answering (fault injection: a proxy that died mid-request).
    public var dropConnection = false

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response.
    static func json(_ status: Int, _ object: Any, headers: [String: String] = [:]) -> DevResponse {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return DevResponse(status: status, headers: headers, body: data)
    }
}

/// GoTrue's error answers in both formats. The 2024-01-01 format is used when the request asks
/// for that API version (or later); the header `x-sb-error-code` is always set.
enum DevError {
    static let apiVersionHeader = "x-supabase-api-version"

    static func response(_ status: Int, _ code: String, _ message: String, request: DevRequest,
                         extra: [String: Any] = [:]) -> DevResponse {
        var headers = ["x-sb-error-code": code]
        var body: [String: Any]
        if let version = request.headers[apiVersionHeader], version >= "2024-01-01", isDate(version) {
            body = ["code": code, "message": message]
            headers["X-Supabase-Api-Version"] = "2024-01-01"
        } else {
            body = ["code": status, "error_code": code, "msg": message]
        }
        body.merge(extra) { _, new in new }
        return .json(status, body, headers: headers)
    }

    private static func isDate(_ text: String) -> Bool {
        text.range(of: #"^2[0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"#, options: .regularExpression) != nil
    }
}
