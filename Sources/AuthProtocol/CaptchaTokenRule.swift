import FoundationEssentials

/// What a CAPTCHA token can look like. hCaptcha and Cloudflare Turnstile tokens are printable
/// ASCII of a few hundred to a few thousand bytes; anything else is refused before it is sent,
/// by authctl and by authd alike.
public enum CaptchaTokenRule {
    /// The longest token taken, in bytes: above any provider's.
    public static let maximumBytes = 8192

    /// Whether `token` can be a provider's token: not empty, at most `maximumBytes`, printable
    /// ASCII without spaces.
    public static func isWellFormed(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= maximumBytes && token.utf8.allSatisfy { (0x21...0x7e).contains($0) }
    }
}
