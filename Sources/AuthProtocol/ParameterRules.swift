import FoundationEssentials
import FoundationGaps

/// The rules several methods' parameters share, for their `validate()`: each throws the -32602
/// error the daemon answers, with the same words whichever method broke it. The daemon's handlers
/// use the non-throwing readings (`isLoopbackRedirect`, `shortText`) on parameters these rules
/// have already let through.
public enum ParameterRules {
    /// The -32602 error for parameters that break a rule beyond their types.
    public static func invalid(_ detail: String) -> RPCErrorObject {
        RPCErrorObject(code: RPCErrorObject.invalidParamsCode, message: "invalid params: \(detail)")
    }

    /// Whether exactly one of `email` and `phone` is given, not empty once trimmed; true for an
    /// email. Throws otherwise.
    @discardableResult
    public static func contactIsEmail(email: String?, phone: String?) throws(RPCErrorObject) -> Bool {
        switch (email?.trimmingWhitespace(), phone?.trimmingWhitespace()) {
        case (let email?, nil) where !email.isEmpty: return true
        case (nil, let phone?) where !phone.isEmpty: return false
        default: throw invalid("give either 'email' or 'phone'")
        }
    }

    /// A CAPTCHA token, when given, must be one a provider could have issued (`CaptchaTokenRule`):
    /// anything else is refused here rather than sent.
    public static func checkCaptchaToken(_ token: String?) throws(RPCErrorObject) {
        guard let token, !CaptchaTokenRule.isWellFormed(token) else { return }
        throw invalid("'captcha_token' must be the token a solved CAPTCHA gave (printable ASCII without spaces, at most \(CaptchaTokenRule.maximumBytes) bytes)")
    }

    /// A browser flow's `redirect_to`: an absolute URL, and a loopback address when it is `http://`.
    public static func checkRedirect(_ redirectTo: String) throws(RPCErrorObject) {
        guard let redirect = URL(string: redirectTo), let scheme = redirect.scheme, !scheme.isEmpty else {
            throw invalid("'redirect_to' must be an absolute URL (http://127.0.0.1:PORT/… or an app's custom scheme)")
        }
        if scheme.lowercased() == "http", !LoopbackHost.contains(redirect.host ?? "") {
            throw invalid("an http:// 'redirect_to' must be a loopback address such as http://127.0.0.1:PORT/callback")
        }
    }

    /// An emailed link's `redirect_to`, when given: only an email carries a link, then as
    /// `checkRedirect`.
    public static func checkLinkRedirect(_ redirectTo: String?, toEmail: Bool) throws(RPCErrorObject) {
        guard let redirectTo else { return }
        guard toEmail else { throw invalid("'redirect_to' is for an email's link; a text message carries only the code") }
        try checkRedirect(redirectTo)
    }

    /// Whether a redirect `checkRedirect` let through is a loopback `http://` address, which binds
    /// its flow (only a redirect carrying the flow's id completes it), rather than an app's scheme.
    public static func isLoopbackRedirect(_ redirectTo: String) -> Bool {
        URL(string: redirectTo)?.scheme?.lowercased() == "http"
    }

    /// An OAuth provider's name as authd passes it on: 1 to 64 ASCII letters, digits, `_` and `-`.
    public static func isProviderName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
    }

    /// An optional short text field as sent on: trimmed, nil when empty.
    public static func shortText(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingWhitespace(), !trimmed.isEmpty else { return nil }
        return trimmed
    }

    /// `shortText` must be at most 256 characters.
    public static func checkShortText(_ text: String?, _ field: String) throws(RPCErrorObject) {
        if let text = shortText(text), text.count > 256 { throw invalid("'\(field)' must be at most 256 characters") }
    }

    /// A factor's or challenge's id: a UUID once trimmed, as GoTrue's are (it goes into a
    /// request's path).
    public static func checkFactorID(_ text: String, _ field: String) throws(RPCErrorObject) {
        guard UUIDText.canonical(text.trimmingWhitespace()) == nil else { return }
        throw invalid("'\(field)' must be a factor's id as 'authctl mfa list' shows it (a UUID)")
    }
}
