import AuthCore
import FoundationEssentials
import FoundationGaps

/// A server's `Retry-After`, made safe to compute with before it reaches the session's backoff.
///
/// The header is the server's to choose and anything may arrive: `inf`, `1e400`, `-5`, twenty
/// digits, a date in the year 9999. Only the forms RFC 9110 defines are read, delay-seconds (whole
/// seconds) or an HTTP date, and the wait is clamped to `0…maxSeconds`; anything else is ignored,
/// as if the header were absent, and the session's own backoff decides.
enum RetryAfter {
    /// The longest wait a server can impose: an hour. Asking for more (a server that means
    /// "never") still leaves authd retrying hourly, which a rate limit lifts long before.
    static let maxSeconds: TimeInterval = RefreshPolicy.retryAfterCap

    /// Seconds to wait, or nil when `value` is absent or not a delay. A date is measured from the
    /// answer's own `Date` (`serverDate`), so that a skewed local clock does not stretch it, or
    /// from `now` when the answer has none.
    static func seconds(_ value: String?, serverDate: String?, now: Date) -> TimeInterval? {
        guard let text = value?.trimmingWhitespace(), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            // More digits than an hour has seconds needs are an hour; never parsed, so never overflowing.
            guard text.utf8.count <= 6, let seconds = Int(text) else { return maxSeconds }
            return min(TimeInterval(seconds), maxSeconds)
        }
        guard let date = HTTPDate.parse(text) else { return nil }
        let reference = serverDate.flatMap(HTTPDate.parse) ?? now
        return min(max(date.timeIntervalSince(reference), 0), maxSeconds)
    }
}
