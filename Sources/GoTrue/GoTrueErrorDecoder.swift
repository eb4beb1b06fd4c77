import AuthCore
import FoundationEssentials
import FoundationGaps
import NIOHTTP1

/// Turns a GoTrue error answer into a `ServerFailure`, whatever form it takes.
public enum GoTrueErrorDecoder {
    /// The header that selects the 2024-01-01 error format.
    public static let apiVersionHeader = "X-Supabase-Api-Version"
    /// The API version authd speaks.
    public static let apiVersion = "2024-01-01"

    /// Decodes status, headers and body. Bodies that are not JSON (a proxy's 502 page) still give
    /// a failure with the status, which the core treats as transient. `Retry-After` is read as
    /// `RetryAfter` says (at most an hour, unreadable values ignored); `now` stands in for the
    /// answer's `Date` when it has none.
    public static func failure(status: Int, headers: HTTPHeaders, body: Data, now: Date = Date()) -> ServerFailure {
        let headerCode = headers.first(name: "x-sb-error-code")
        let retryAfter = RetryAfter.seconds(headers.first(name: "retry-after"), serverDate: headers.first(name: "date"), now: now)
        guard let object = (try? JSONValue(parsing: body))?.objectValue else {
            return .http(status: status, code: headerCode, message: HTTPStatusText.text(for: status), retryAfter: retryAfter)
        }
        // 2024-01-01: {"code":"invalid_credentials","message":"…"}; legacy: {"code":400,"error_code":"…","msg":"…"};
        // OAuth style: {"error":"invalid_grant","error_description":"…"}.
        let code = object["code"]?.stringValue ?? object["error_code"]?.stringValue ?? headerCode ?? object["error"]?.stringValue
        let message = object["message"]?.stringValue ?? object["msg"]?.stringValue
            ?? object["error_description"]?.stringValue ?? HTTPStatusText.text(for: status)
        return .http(status: status, code: code, message: message, retryAfter: retryAfter)
    }
}

/// Short texts for statuses whose body we could not read.
enum HTTPStatusText {
    static func text(for status: Int) -> String {
        switch status {
        case 408: return "request timeout"
        case 429: return "too many requests"
        case 500: return "internal server error"
        case 502: return "bad gateway"
        case 503: return "service unavailable"
        case 504: return "gateway timeout"
        default: return "HTTP \(status)"
        }
    }
}
