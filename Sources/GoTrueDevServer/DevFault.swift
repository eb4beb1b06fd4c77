import Foundation

/// A failure the development server answers refresh grants with, before touching any token, so
/// that tests can drive a client through every fault class a real project can produce.
struct DevFault: Sendable {
    /// The HTTP status.
    var status: Int
    /// GoTrue's error code; with `html` unset the body is GoTrue's error JSON for it.
    var code: String?
    /// The message in the error body.
    var message: String
    /// Sent as `Retry-After` when set.
    var retryAfter: Int?
    /// Answer with an HTML page instead of JSON, as a proxy in front of GoTrue would.
    var html: Bool
    /// How many more refresh grants fail; nil means until cleared.
    var remaining: Int?

    /// Reads `{"status":503,"code":…,"message":…,"retry_after":…,"html":true,"count":…}`.
    init?(json: [String: Any]) {
        guard let status = json["status"] as? Int, (400...599).contains(status) else { return nil }
        self.status = status
        code = json["code"] as? String
        message = json["message"] as? String ?? "injected fault"
        retryAfter = json["retry_after"] as? Int
        html = json["html"] as? Bool ?? false
        remaining = json["count"] as? Int
    }

    /// The answer for `request`.
    func response(to request: DevRequest) -> DevResponse {
        var response: DevResponse
        if html {
            response = DevResponse(status: status, headers: ["Content-Type": "text/html"],
                                   body: Data("<html><body><h1>\(status)</h1>upstream trouble</body></html>".utf8))
        } else {
            response = DevError.response(status, code ?? "unexpected_failure", message, request: request)
        }
        if let retryAfter { response.headers["Retry-After"] = String(retryAfter) }
        return response
    }
}
