import Foundation

/// A failure the development server answers refresh grants (or, when asked, password grants)
/// with, so that tests can drive a client through every fault class a real project (and the
/// network in front of it) can produce.
///
/// Four kinds, which combine: an error `status` (answered before any token is touched), a
/// dropped connection (closed without an answer, as a crashed proxy would), a `delay` (the
/// answer, error or real rotation, is held back that long), and a session answered with an
/// `expires_in` of the test's choosing (the grant succeeds, the number is whatever was asked).
struct DevFault: Sendable {
    /// The grant type the fault applies to: `refresh_token` unless the fault says `"grant"`.
    var grant: String
    /// The HTTP status; nil for a fault that only drops or delays.
    var status: Int?
    /// GoTrue's error code; with `html` unset the body is GoTrue's error JSON for it.
    var code: String?
    /// The message in the error body.
    var message: String
    /// Sent as `Retry-After`, verbatim, when set: a number of seconds, or any text at all
    /// (`inf`, `1e400`, an HTTP date) to see what a client makes of it.
    var retryAfter: String?
    /// The JSON text a successful grant's `expires_in` is replaced with (`1e400`, `-1`, `"3600"`,
    /// …); the empty text leaves the field out. Nil keeps the real lifetime.
    var expiresIn: String?
    /// Answer with an HTML page instead of JSON, as a proxy in front of GoTrue would.
    var html: Bool
    /// Close the connection without answering.
    var drop: Bool
    /// Seconds to hold the answer back.
    var delay: TimeInterval
    /// How many more refresh grants fail; nil means until cleared.
    var remaining: Int?

    /// Reads `{"status":503,"code":…,"message":…,"retry_after":30 or "text","html":true,"drop":true,"delay":2.5,
    /// "expires_in":"JSON text","grant":"password","count":…}`.
    /// Nil when the fault would do nothing, the status is not an error or the grant is not one it can fail.
    init?(json: [String: Any]) {
        grant = json["grant"] as? String ?? "refresh_token"
        guard ["refresh_token", "password"].contains(grant) else { return nil }
        status = json["status"] as? Int
        if let status, !(400...599).contains(status) { return nil }
        code = json["code"] as? String
        message = json["message"] as? String ?? "injected fault"
        retryAfter = (json["retry_after"] as? String) ?? (json["retry_after"] as? Int).map(String.init)
        expiresIn = json["expires_in"] as? String
        html = json["html"] as? Bool ?? false
        drop = json["drop"] as? Bool ?? false
        delay = (json["delay"] as? NSNumber)?.doubleValue ?? 0
        remaining = json["count"] as? Int
        guard status != nil || drop || delay > 0 || expiresIn != nil, delay >= 0 else { return nil }
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
            if let retryAfter { response.headers["Retry-After"] = retryAfter }
        } else {
            return nil
        }
        response.delay = delay
        return response
    }

    /// `answer` (a session) with its `expires_in` replaced as the fault says. The text goes into
    /// the JSON as it is, so that numbers no JSON library would write (`1e400`) can be sent.
    func applyingExpiresIn(to answer: DevResponse) -> DevResponse {
        guard let expiresIn, answer.status == 200, var text = String(data: answer.body, encoding: .utf8),
              let field = text.range(of: #""expires_in":[^,}]*"#, options: .regularExpression) else { return answer }
        var changed = answer
        if expiresIn.isEmpty {
            // Leave the field out, with the comma that joined it to the next one.
            let upper = text[field.upperBound...].hasPrefix(",") ? text.index(after: field.upperBound) : field.upperBound
            text.removeSubrange(field.lowerBound..<upper)
        } else {
            text.replaceSubrange(field, with: #""expires_in":"# + expiresIn)
        }
        changed.body = Data(text.utf8)
        return changed
    }
}
