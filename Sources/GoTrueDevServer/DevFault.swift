import Foundation

/// A failure the development server answers refresh grants with, so that tests can drive a
/// client through every fault class a real project (and the network in front of it) can produce.
///
/// Three kinds, which combine: an error `status` (answered before any token is touched), a
/// dropped connection (closed without an answer, as a crashed proxy would), and a `delay` (the
/// answer, error or real rotation, is held back that long).
struct DevFault: Sendable {
    /// The HTTP status; nil for a fault that only drops or delays.
    var status: Int?
    /// GoTrue's error code; with `html` unset the body is GoTrue's error JSON for it.
    var code: String?
    /// The message in the error body.
    var message: String
    /// Sent as `Retry-After` when set.
    var retryAfter: Int?
    /// Answer with an HTML page instead of JSON, as a proxy in front of GoTrue would.
    var html: Bool
    /// Close the connection without answering.
    var drop: Bool
    /// Seconds to hold the answer back.
    var delay: TimeInterval
    /// How many more refresh grants fail; nil means until cleared.
    var remaining: Int?

    /// Reads `{"status":503,"code":…,"message":…,"retry_after":…,"html":true,"drop":true,"delay":2.5,"count":…}`.
    /// Nil when the fault would do nothing or the status is not an error.
    init?(json: [String: Any]) {
        status = json["status"] as? Int
        if let status, !(400...599).contains(status) { return nil }
        code = json["code"] as? String
        message = json["message"] as? String ?? "injected fault"
        retryAfter = json["retry_after"] as? Int
        html = json["html"] as? Bool ?? false
        drop = json["drop"] as? Bool ?? false
        delay = (json["delay"] as? NSNumber)?.doubleValue ?? 0
        remaining = json["count"] as? Int
        guard status != nil || drop || delay > 0, delay >= 0 else { return nil }
    }

    /// The answer for `request` when the fault fails it; nil when it only delays.
    func response(to request: DevRequest) -> DevResponse? {
        var response: DevResponse
        if drop {
            response = DevResponse(status: 502)
            response.dropConnection = true
        } else if let status {
            if html {
                response = DevResponse(status: status, headers: ["Content-Type": "text/html"],
                                       body: Data("<html><body><h1>\(status)</h1>upstream trouble</body></html>".utf8))
            } else {
                response = DevError.response(status, code ?? "unexpected_failure", message, request: request)
            }
            if let retryAfter { response.headers["Retry-After"] = String(retryAfter) }
        } else {
            return nil
        }
        response.delay = delay
        return response
    }
}
