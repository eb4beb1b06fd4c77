/// Renders a sign-in page: a pure function from a `SignInPageView` to a complete HTML document.
///
/// The document needs nothing from outside itself: its stylesheet is inside it, it has no script
/// and loads no resource but a `data:` QR image. The server must send it with
/// `SignInPageStyle.contentSecurityPolicy`, which allows exactly that (the stylesheet by its hash).
public struct SignInPageRenderer {
    /// The page's HTML document, every value in it escaped.
    public static func render(_ view: SignInPageView) -> String {
        // A first pass learns which fields the page has, so that the error can be placed under
        // the field it concerns (or head the form when the page has no such field) and every
        // field it concerns can point to it before the error itself is written.
        var survey = SignInPageRenderer(view: view, errorField: nil, focus: nil)
        survey.writeCard()
        let errorField = view.error?.field.flatMap { survey.fieldsWritten.contains($0) ? $0 : nil }
        // The focus goes where the user types next: the field the error concerns, else the first
        // empty one (the password after a wrong one, the email pre-filled), else the first.
        let focus = errorField ?? survey.fieldsWritten.first { !survey.fieldsPrefilled.contains($0) }
            ?? survey.fieldsWritten.first
        var renderer = SignInPageRenderer(view: view, errorField: errorField, focus: focus)
        renderer.writeDocument()
        return renderer.html.output
    }

    let view: SignInPageView
    /// The field the error is written under; nil: the error heads the form.
    let errorField: SignInPageView.Field?
    /// The field that takes `autofocus`.
    let focus: SignInPageView.Field?
    var html = HTMLWriter()
    /// The visible fields written so far, and those of them written with a value.
    var fieldsWritten: [SignInPageView.Field] = []
    var fieldsPrefilled: Set<SignInPageView.Field> = []

    private init(view: SignInPageView, errorField: SignInPageView.Field?, focus: SignInPageView.Field?) {
        self.view = view
        self.errorField = errorField
        self.focus = focus
    }

    private mutating func writeDocument() {
        html.raw("<!DOCTYPE html>\n")
        html.open("html", [("lang", view.language)])
        html.raw("\n<head>\n<meta charset=\"utf-8\">\n")
        html.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
        // The page's addresses (and a provider's, on the way out) are nobody else's business; but
        // not `no-referrer`, under which browsers send the page's own forms with `Origin: null`,
        // and the server could not tell them from another site's (SignInPageStyle.otherHeaders).
        html.raw("<meta name=\"referrer\" content=\"same-origin\">\n")
        html.raw("<meta name=\"color-scheme\" content=\"light dark\">\n")
        if case .leaving(let destination, _) = view.step, let url = Self.followable(destination) {
            html.open("meta", [("http-equiv", "refresh"), ("content", "0; url=" + url)])
            html.raw("\n")
        }
        if case .waiting = view.step {
            html.raw("<meta http-equiv=\"refresh\" content=\"2\">\n")
        }
        html.element("title", text: title + " – " + view.project.name)
        html.raw("\n<style>" + SignInPageStyle.stylesheet + "</style>\n</head>\n<body>\n<main>\n")
        writeHeader()
        writeCard()
        html.raw("\n<footer>")
        html.text("authd signs you in on this computer and keeps the session in your keyring.")
        html.raw("</footer>\n</main>\n</body>\n</html>\n")
    }

    /// The project, named above the card: its initial, its name, and the host the answers go to.
    private mutating func writeHeader() {
        html.raw("<header>\n")
        if let initial = view.project.name.first {
            html.element("div", [("class", "mark"), ("aria-hidden", "true")], text: String(initial).uppercased())
        }
        html.element("p", [("class", "project")], text: view.project.name)
        html.element("p", [("class", "host")], text: view.project.host)
        html.raw("\n</header>\n")
    }

    private mutating func writeCard() {
        html.raw("<div class=\"card\">\n")
        writeStep()
        html.raw("</div>")
    }

    /// The error, in a live region, where `errorField` says: here when called for the form's
    /// head and no field takes it.
    mutating func writeErrorIfUnplaced() {
        if errorField == nil { writeError() }
    }

    mutating func writeError() {
        guard let error = view.error else { return }
        html.element("p", [("id", Self.errorID), ("class", "error"), ("role", "alert")], text: error.message)
        html.raw("\n")
    }

    static let errorID = "error"

    /// The `<title>`'s first part: what the page is for.
    var title: String {
        switch view.step {
        case .waiting: return "One moment"
        case .choose: return "Sign in"
        case .signUp: return "Create an account"
        case .checkInbox: return "Check your inbox"
        case .requestCode, .enterCode: return "Sign in with a code"
        case .ssoDomain: return "Sign in with SSO"
        case .forgotPassword, .recoveryCode, .newPassword: return "Reset your password"
        case .chooseSecondFactor, .secondFactor(_, enrolling: false, _): return "Two-step verification"
        case .secondFactor(_, enrolling: true, _), .offerEnrolment, .enrollPhone: return "Add a second step"
        case .enrollTOTP: return "Set up your authenticator app"
        case .leaving(_, let name): return "Continuing to " + name
        case .signedIn: return "Signed in"
        case .ended(.failed): return "Sign-in failed"
        case .ended(.expired): return "Sign-in expired"
        case .ended(.cancelled): return "Sign-in cancelled"
        case .ended(.stoppedSignedIn): return "Sign-in stopped"
        }
    }

    /// `destination` if the page may send the browser there: `https:`, or `http:` to this
    /// computer (`127.0.0.1`, `localhost`, `[::1]`, with or without a port), and nothing that
    /// could end the attribute or the refresh's URL early. The authority is read as a browser
    /// reads it: a host and a port only, so that no user name (`http://127.0.0.1:@elsewhere/`,
    /// whose host is `elsewhere`) passes for this computer.
    static func followable(_ destination: String) -> String? {
        let forbidden: Set<Unicode.Scalar> = ["\"", "'", "<", ">", "\\", "`", " "]
        guard destination.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && !forbidden.contains($0) }) else {
            return nil
        }
        let lowered = destination.lowercased()
        let secure = lowered.hasPrefix("https://")
        guard secure || lowered.hasPrefix("http://") else { return nil }
        let authority = lowered.dropFirst(secure ? 8 : 7).prefix { !"/?#".contains($0) }
        guard !authority.isEmpty, authority.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) }) else {
            return nil
        }
        if secure { return destination }
        for host in ["127.0.0.1", "localhost", "[::1]"] where authority.hasPrefix(host) {
            let port = authority.dropFirst(host.count)
            if port.isEmpty { return destination }
            let digits = port.dropFirst()
            if port.first == ":", (1...5).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }) { return destination }
        }
        return nil
    }

    /// The QR image for an `<img>`: GoTrue's SVG document (`<?xml …` or `<svg …`) as a base64
    /// `data:` URI, or a `data:image/svg+xml` URI as a client library would have made of it (`#`
    /// percent-encoded: in a URL it would start a fragment and cut the image short). Anything
    /// else is no image. In an `<img>` an SVG runs no script, and the CSP allows only `data:` images.
    static func qrImageSource(_ image: String) -> String? {
        let lowered = image.lowercased()
        if lowered.hasPrefix("<?xml") || lowered.hasPrefix("<svg") {
            return "data:image/svg+xml;base64," + base64(Array(image.utf8))
        }
        guard lowered.hasPrefix("data:image/svg+xml;") || lowered.hasPrefix("data:image/svg+xml,") else { return nil }
        return image.replacing("#", with: "%23")
    }

    /// `bytes` in base64 (RFC 4648, with padding).
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var encoded: [UInt8] = []
        encoded.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                encoded.append(position <= count ? alphabet[Int(group >> (18 - 6 * position) & 0x3f)] : UInt8(ascii: "="))
            }
            index += count
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}
