/// An HTTP answer of the sign-in page's server, with the headers every answer carries: the page's
/// Content-Security-Policy (no script, no frame, no other origin), no caching, no sniffing, no
/// referrer. The server writes it as it is; `SignInPageGate` makes the answers it decides alone.
///
/// A `Set-Cookie` holds the page's cookie and a page holds a page token: the description and the
/// mirror show the status, the header fields' names and the body's length only.
public struct SignInPageHTTPResponse: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// One header field.
    public struct Header: Sendable, Equatable {
        /// The field's name.
        public var name: String
        /// Its value.
        public var value: String

        /// The field `name: value`.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The status code.
    public var status: Int
    /// The status's reason phrase.
    public var reason: String
    /// The header fields, the security headers first.
    public var headers: [Header]
    /// The body.
    public var body: [UInt8]

    /// An answer of `status` with `headers` after the security headers, and `body`.
    public init(status: Int, headers: [Header] = [], body: [UInt8] = []) {
        self.status = status
        self.reason = Self.reasons[status] ?? "Unknown"
        self.headers = Self.securityHeaders + headers
        self.body = body
    }

    /// The headers on everything the server sends: `SignInPageStyle`'s policy and other headers,
    /// and `X-Frame-Options` for browsers that do not read `frame-ancestors`.
    public static let securityHeaders: [Header] = [Header("Content-Security-Policy", SignInPageStyle.contentSecurityPolicy)]
        + SignInPageStyle.otherHeaders.map { Header($0.name, $0.value) } + [Header("X-Frame-Options", "DENY")]

    /// A page: `html`, as `SignInPageRenderer` wrote it.
    public static func page(_ html: String) -> SignInPageHTTPResponse {
        SignInPageHTTPResponse(status: 200, headers: [Header("Content-Type", "text/html; charset=utf-8")], body: Array(html.utf8))
    }

    /// A redirect to `location` on this server (303: the browser follows it with a GET), setting
    /// `cookie` (a whole `Set-Cookie` value) when there is one.
    public static func seeOther(_ location: String, setting cookie: String? = nil) -> SignInPageHTTPResponse {
        SignInPageHTTPResponse(status: 303, headers: [Header("Location", location)] + (cookie.map { [Header("Set-Cookie", $0)] } ?? []))
    }

    /// A refusal: `status` and `message`, plain text in words a user can act on.
    public static func refusal(_ status: Int, _ message: String) -> SignInPageHTTPResponse {
        SignInPageHTTPResponse(status: status, headers: [Header("Content-Type", "text/plain; charset=utf-8")], body: Array((message + "\n").utf8))
    }

    /// The status, the header names and the body's length; never a value.
    public var description: String {
        "SignInPageHTTPResponse(\(status), headers: \(headers.map(\.name).joined(separator: ", ")), body: \(body.count) bytes)"
    }

    /// Only what `description` shows, so that `dump` shows no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["response": description]) }

    /// The value of the first header field called `name` (compared without regard to case).
    public func value(of name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The reason phrases of the statuses the server sends.
    static let reasons: [Int: String] = [
        200: "OK", 303: "See Other", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
        408: "Request Timeout", 410: "Gone", 413: "Content Too Large", 415: "Unsupported Media Type", 421: "Misdirected Request",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 503: "Service Unavailable",
    ]
}
