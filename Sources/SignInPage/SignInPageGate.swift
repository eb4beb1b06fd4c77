/// Who may see and post to one sign-in page that authd serves on 127.0.0.1, decided request by
/// request before anything reaches the flow. A value without I/O: the server hands it each
/// request it read, with a source of randomness, and carries out the answer.
///
/// The rules (docs/sign-in-page.md, "Who gets in"):
/// - every request names this server as its `Host` (`127.0.0.1:<port>`), which a page of another
///   site whose name was made to resolve to 127.0.0.1 (DNS rebinding) cannot;
/// - the browser comes in through the URL the daemon opened, `/sign-in/open/<secret>`. The secret
///   (256 bits) works once: it is exchanged for this page's cookie, `HttpOnly; SameSite=Strict`,
///   named for this page (`authd_page_<id>`) because browsers do not keep cookies apart by port,
///   and a redirect to `/sign-in`, so that the secret leaves the address bar. The link is under
///   the cookie's path, so that a browser opening it again (the user clicked the printed link
///   too) sends the cookie and is shown the page;
/// - everything else needs that cookie, but for the return from an OAuth provider or SSO
///   (below); only its value counts, compared in constant time. Its path is the page's
///   (`/sign-in`), so that fewer requests carry it;
/// - the page (and with it a page token) is shown only to a request for a document of its own,
///   where the browser says so (`Sec-Fetch-Site` `none` or `same-origin`, `Sec-Fetch-Dest`
///   `document`): a page of another server on 127.0.0.1 is the same *site*, so the browser sends
///   it the cookie, but it cannot have the page loaded as an image or a frame to use up the page's
///   tokens;
/// - a POST goes to one of the page's form actions, from this origin (`Origin`, and
///   `Sec-Fetch-Site` when sent), as a urlencoded form of at most `maximumBodyBytes`, with a
///   page token this gate issued: each page shown gets a new one, and each is good for one POST.
///   A token used already (a double click, or a form sent again from the history) shows the
///   page as it is now and does nothing;
/// - the browser's return from a provider is a cross-site navigation, which carries no
///   `SameSite=Strict` cookie. It is let in at `returnPath`, which holds a second secret, and only
///   there. The driver answers it with a page that moves on to `/sign-in` by itself, where the
///   cookie is sent again. What the return carries (a PKCE code) is worth nothing without the
///   verifier that the daemon keeps.
///
/// The description and the mirror show the port and whether the link was used, never a secret.
public struct SignInPageGate: Sendable, CustomStringConvertible, CustomReflectable {
    /// The largest body taken: a form of a few fields.
    public static let maximumBodyBytes = 16 * 1024
    /// How many page tokens stay good: a page reloads itself every two seconds while it waits,
    /// and an older tab's form must still be answered with the page as it is now.
    public static let maximumPageTokens = 16
    /// How long the cookie lasts: as long as a flow (`SignInPageFlow.lifetime`).
    public static let cookieLifetimeSeconds = 600

    /// The port the server listens on, at 127.0.0.1.
    public let port: UInt16
    /// Where the forms post to.
    public let actions: SignInPageView.FormActions
    /// The path of the page itself.
    public let pagePath: String
    /// The cookie's name, for this page only.
    public let cookieName: String
    /// The one-time path the browser opens first.
    let openPath: String
    /// Where a provider or SSO sends the browser back.
    public let returnPath: String
    let cookieValue: String
    var opened = false
    /// The page tokens issued, oldest first, and whether each was used.
    var pageTokens: [(token: String, used: Bool)] = []

    /// A gate for a server on `port`, its secrets drawn from `generator` (the system's in the
    /// daemon: `SystemRandomNumberGenerator` reads the kernel's).
    public init<Generator: RandomNumberGenerator>(port: UInt16, actions: SignInPageView.FormActions = SignInPageView.FormActions(),
                                                  using generator: inout Generator) {
        self.port = port
        self.actions = actions
        pagePath = actions.page
        cookieName = "authd_page_" + String(Self.secret(bytes: 8, using: &generator))
        openPath = actions.page + "/open/" + Self.secret(bytes: 32, using: &generator)
        returnPath = actions.page + "/return/" + Self.secret(bytes: 32, using: &generator)
        cookieValue = Self.secret(bytes: 32, using: &generator)
    }

    /// This server's origin, which every POST must come from.
    public var origin: String { "http://127.0.0.1:\(port)" }
    /// The URL to open in the browser: good once.
    public var openURL: String { origin + openPath }
    /// The URL a provider or SSO sends the browser back to (the `redirect_to` of the sign-in).
    public var returnURL: String { origin + returnPath }

    /// What to do with `request`; a page shown gets a new token from `generator`.
    public mutating func admit<Generator: RandomNumberGenerator>(_ request: SignInPageHTTPRequest,
                                                                 using generator: inout Generator) -> SignInPageGateAnswer {
        guard let host = request.single("Host"), host.lowercased() == "127.0.0.1:\(port)" else {
            return .respond(.refusal(421, "This server answers only at \(origin)."))
        }
        let path = request.path
        switch request.method {
        case "GET":
            if path.hasPrefix(pagePath + "/open/") { return .respond(enter(path, request)) }
            if Self.same(path, returnPath) {
                guard let query = SignInPageForm.parse(request.query.utf8) else { return .respond(.refusal(400, Self.malformed)) }
                return .returned(query)
            }
            if path == "/" { return .respond(.seeOther(pagePath)) }
            guard hasCookie(request) else { return .respond(.refusal(403, Self.openFromTheApp)) }
            guard path == pagePath else { return .respond(.refusal(404, "There is nothing here. The sign-in page is at \(pagePath).")) }
            guard Self.isDocumentOfItsOwn(request) else {
                return .respond(.refusal(403, "The sign-in page opens only as a page of its own, not inside another."))
            }
            return .showPage(csrfToken: issuePageToken(using: &generator))
        case "POST":
            return submitted(request)
        default:
            return .respond(.refusal(405, "The sign-in page takes only GET and POST."))
        }
    }

    /// A new page token, good for one POST, for a page about to be shown.
    public mutating func issuePageToken<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        let token = Self.secret(bytes: 32, using: &generator)
        pageTokens.append((token, false))
        if pageTokens.count > Self.maximumPageTokens { pageTokens.removeFirst(pageTokens.count - Self.maximumPageTokens) }
        return token
    }

    /// The opening URL: the cookie and the page, once; after that, the page again for the
    /// browser that has the cookie (a reload), and a refusal for anyone else.
    mutating func enter(_ path: Substring, _ request: SignInPageHTTPRequest) -> SignInPageHTTPResponse {
        if !opened, Self.same(path, openPath) {
            opened = true
            let cookie = "\(cookieName)=\(cookieValue); Path=\(pagePath); Max-Age=\(Self.cookieLifetimeSeconds); HttpOnly; SameSite=Strict"
            return .seeOther(pagePath, setting: cookie)
        }
        if hasCookie(request) { return .seeOther(pagePath) }
        return .refusal(403, "This sign-in link was used already. Start the sign-in again from your app (or run `authctl login`).")
    }

    /// A POST: to a form action, from this origin, with the cookie, a urlencoded body and a token.
    mutating func submitted(_ request: SignInPageHTTPRequest) -> SignInPageGateAnswer {
        let path = String(request.path)
        guard actions.all.contains(path) else { return .respond(.refusal(404, "There is no form here.")) }
        guard request.single("Origin") == origin, request.values(of: "Sec-Fetch-Site").allSatisfy({ $0 == "same-origin" }) else {
            return .respond(.refusal(403, "This form can only be sent from the sign-in page itself."))
        }
        guard hasCookie(request) else { return .respond(.refusal(403, Self.openFromTheApp)) }
        guard request.body.count <= Self.maximumBodyBytes else { return .respond(.refusal(413, "That form is too large.")) }
        let mediaType = request.single("Content-Type")?.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first
        guard let mediaType, mediaType.filter({ $0 != " " }).lowercased() == "application/x-www-form-urlencoded" else {
            return .respond(.refusal(415, "The form must be sent as a web form (application/x-www-form-urlencoded)."))
        }
        guard var form = SignInPageForm.parse(request.body) else { return .respond(.refusal(400, Self.malformed)) }
        let token = form[.csrfToken] ?? ""
        guard let index = pageTokens.firstIndex(where: { Self.same($0.token, token) }) else {
            return .respond(.refusal(403, "This page is out of date. Reload it, or start the sign-in again from your app."))
        }
        if pageTokens[index].used { return .respond(.seeOther(pagePath)) }
        pageTokens[index].used = true
        var values = form.values
        values[SignInPageView.Field.csrfToken.rawValue] = nil
        form = SignInPageForm(values)
        return .submitted(path: path, form: form)
    }

    /// Whether the browser asks for the page as a document of its own: opened (`none`) or moved
    /// to from the page itself (`same-origin`), as the top-level document. A browser that sends no
    /// Fetch Metadata is taken at its word.
    static func isDocumentOfItsOwn(_ request: SignInPageHTTPRequest) -> Bool {
        request.values(of: "Sec-Fetch-Site").allSatisfy { $0 == "none" || $0 == "same-origin" }
            && request.values(of: "Sec-Fetch-Dest").allSatisfy { $0 == "document" }
    }

    /// Whether `request` carries this page's cookie with its value.
    func hasCookie(_ request: SignInPageHTTPRequest) -> Bool {
        request.cookies(named: cookieName).contains { Self.same($0, cookieValue) }
    }

    /// Whether `a` and `b` are equal, in a time that depends only on their lengths, so that
    /// the time of a refusal says nothing about how much of a secret was right.
    static func same(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        let left = Array(a.utf8), right = Array(b.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// `bytes` random bytes from `generator`, as lower-case hexadecimal.
    static func secret<Generator: RandomNumberGenerator>(bytes: Int, using generator: inout Generator) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes * 2)
        for _ in 0..<bytes {
            let byte = UInt8.random(in: .min ... .max, using: &generator)
            text += [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]]
        }
        return String(decoding: text, as: UTF8.self)
    }

    static let openFromTheApp = "This page opens only from the link authd gave your browser. Start the sign-in again from your app (or run `authctl login`)."
    static let malformed = "That request could not be read."

    /// The port and whether the link was used; never a secret.
    public var description: String { "SignInPageGate(port: \(port), opened: \(opened), pageTokens: \(pageTokens.count))" }

    /// Only what `description` shows, so that `dump` shows no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["port": port, "opened": opened, "pageTokens": pageTokens.count]) }
}

/// What `SignInPageGate` decided about a request.
public enum SignInPageGateAnswer: Sendable, Equatable {
    /// The page, to be shown with this token in its forms.
    case showPage(csrfToken: String)
    /// A form posted to `path` (one of the page's form actions), its token checked and removed.
    case submitted(path: String, form: SignInPageForm)
    /// The browser came back from a provider or SSO with this query.
    case returned(SignInPageForm)
    /// An answer the gate made itself: a redirect or a refusal.
    case respond(SignInPageHTTPResponse)
}
