import SignInPage
import Testing

/// The gate of the sign-in page's server: the opening link, the cookie, the host, the origin
/// and the page tokens, each refused alone, and nothing a refusal does uses anything up.
@Suite struct SignInPageGateTests {
    static let port: UInt16 = 40123
    static let origin = "http://127.0.0.1:40123"

    /// A gate, and requests to it as a browser on this computer sends them.
    struct Browser {
        var gate: SignInPageGate
        var generator = SeededGenerator(seed: 99)
        /// `name=value` of the cookie the opening link set, once it did.
        var cookie: String?

        init(seed: UInt64 = 1) {
            var secrets = SeededGenerator(seed: seed)
            gate = SignInPageGate(port: SignInPageGateTests.port, using: &secrets)
        }

        var openPath: String { String(gate.openURL.dropFirst(SignInPageGateTests.origin.count)) }

        mutating func send(_ method: String, _ target: String, headers: [(name: String, value: String)]? = nil,
                           cookie: String? = nil, body: String = "") -> SignInPageGateAnswer {
            var fields = headers ?? [("Host", "127.0.0.1:\(SignInPageGateTests.port)")]
            if let cookie = cookie ?? self.cookie { fields.append(("Cookie", cookie)) }
            let answer = gate.admit(SignInPageHTTPRequest(method: method, target: target, headers: fields, body: Array(body.utf8)),
                                    using: &generator)
            if case .respond(let response) = answer { SignInPageGateTests.expectSecurityHeaders(response) }
            return answer
        }

        /// Opens the link and keeps the cookie.
        mutating func open() throws {
            let answer = send("GET", openPath)
            guard case .respond(let response) = answer, response.status == 303 else {
                Issue.record("the opening link gave \(answer)")
                return
            }
            let setCookie = try #require(response.value(of: "Set-Cookie"))
            cookie = String(try #require(setCookie.split(separator: ";").first))
        }

        /// The page's token, as a page shown now carries it.
        mutating func pageToken() throws -> String {
            guard case .showPage(let token) = send("GET", "/sign-in") else {
                Issue.record("the page was not shown")
                return ""
            }
            return token
        }

        mutating func post(_ path: String, _ body: String, origin: String? = SignInPageGateTests.origin,
                           contentType: String = "application/x-www-form-urlencoded", extra: [(name: String, value: String)] = []) -> SignInPageGateAnswer {
            var headers: [(name: String, value: String)] = [("Host", "127.0.0.1:\(SignInPageGateTests.port)"), ("Content-Type", contentType)]
            if let origin { headers.append(("Origin", origin)) }
            return send("POST", path, headers: headers + extra, body: body)
        }
    }

    static func expectSecurityHeaders(_ response: SignInPageHTTPResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.value(of: "Content-Security-Policy") == SignInPageStyle.contentSecurityPolicy, sourceLocation: sourceLocation)
        #expect(response.value(of: "Cache-Control") == "no-store", sourceLocation: sourceLocation)
        #expect(response.value(of: "X-Frame-Options") == "DENY", sourceLocation: sourceLocation)
        #expect(response.value(of: "Referrer-Policy") == "same-origin", sourceLocation: sourceLocation)
    }

    static func status(_ answer: SignInPageGateAnswer) -> Int? {
        if case .respond(let response) = answer { return response.status }
        return nil
    }

    static func isHex(_ text: some StringProtocol, digits: Int) -> Bool {
        text.count == digits && text.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }

    @Test func theOpeningLinkSetsTheCookieOnceAndLeavesTheAddressBar() throws {
        var browser = Browser()
        let link = browser.openPath
        // Under the cookie's path: a browser opening the link again sends the cookie with it.
        #expect(link.hasPrefix("/sign-in/open/") && Self.isHex(link.dropFirst(14), digits: 64), "256 bits: \(link.count)")
        guard case .respond(let response) = browser.send("GET", link) else { Issue.record("no redirect"); return }
        #expect(response.status == 303)
        #expect(response.value(of: "Location") == "/sign-in")
        let setCookie = try #require(response.value(of: "Set-Cookie"))
        let attributes = setCookie.split(separator: ";").map { $0.trimmingPrefix(" ") }
        #expect(Set(attributes.dropFirst()) == ["Path=/sign-in", "Max-Age=600", "HttpOnly", "SameSite=Strict"])
        let pair = attributes[0].split(separator: "=")
        #expect(pair.count == 2 && pair[0].hasPrefix("authd_page_") && Self.isHex(pair[1], digits: 64))

        // Used: a stranger is refused, the browser with the cookie is sent to the page again.
        #expect(Self.status(browser.send("GET", link)) == 403)
        browser.cookie = String(attributes[0])
        guard case .respond(let again) = browser.send("GET", link) else { Issue.record("no redirect"); return }
        #expect(again.status == 303 && again.value(of: "Location") == "/sign-in" && again.value(of: "Set-Cookie") == nil)
    }

    @Test func aWrongSecretIsRefusedAndDoesNotUseUpTheLink() throws {
        var browser = Browser()
        let link = browser.openPath
        var wrong = Array(link)
        wrong[wrong.count - 1] = wrong.last == "0" ? "1" : "0"
        for path in [String(wrong), "/sign-in/open/", "/sign-in/open/" + String(repeating: "0", count: 64), "/open/" + link.dropFirst(14),
                     link + "0", String(link.dropLast())] {
            #expect(Self.status(browser.send("GET", path)) == 403, "\(path)")
        }
        try browser.open()
        #expect(browser.cookie != nil)
    }

    @Test func thePageNeedsThisPagesCookieWithItsValue() throws {
        var browser = Browser()
        #expect(Self.status(browser.send("GET", "/sign-in")) == 403)
        try browser.open()
        let cookie = try #require(browser.cookie)
        let name = String(cookie.split(separator: "=")[0])
        var other = Browser(seed: 2)
        try other.open()
        let othersCookie = try #require(other.cookie)
        for wrong in [name + "=" + String(repeating: "0", count: 64), name + "=", othersCookie, "x=1; " + name + "=abc"] {
            #expect(Self.status(browser.send("GET", "/sign-in", cookie: wrong)) == 403, "\(wrong)")
        }
        // Another server on 127.0.0.1 may have set a cookie of the same name: the right value still counts.
        let tossed = name + "=" + String(repeating: "f", count: 64) + "; theme=dark; " + cookie
        guard case .showPage(let token) = browser.send("GET", "/sign-in", cookie: tossed) else { Issue.record("not shown"); return }
        #expect(Self.isHex(token, digits: 64))
        #expect(Self.status(browser.send("GET", "/", cookie: "")) == 303)
        #expect(Self.status(browser.send("GET", "/favicon.ico")) == 404)
        #expect(Self.status(browser.send("PUT", "/sign-in")) == 405)
    }

    /// Another server on 127.0.0.1 is the same site, so the browser sends it the cookie: it may
    /// not have the page loaded inside its own (as an image, a frame) to use up its tokens.
    @Test func thePageIsShownOnlyAsADocumentOfItsOwn() throws {
        var browser = Browser()
        try browser.open()
        let host = ("Host", "127.0.0.1:40123")
        for fetch in [[("Sec-Fetch-Site", "same-site")], [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Dest", "image")],
                      [("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Dest", "iframe")]] {
            let headers = ([host] + fetch).map { (name: $0.0, value: $0.1) }
            #expect(Self.status(browser.send("GET", "/sign-in", headers: headers)) == 403, "\(fetch)")
        }
        for fetch in [[("Sec-Fetch-Site", "none"), ("Sec-Fetch-Dest", "document")], [("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Dest", "document")], []] {
            let headers = ([host] + fetch).map { (name: $0.0, value: $0.1) }
            guard case .showPage = browser.send("GET", "/sign-in", headers: headers) else { Issue.record("refused: \(fetch)"); continue }
        }
    }

    @Test(arguments: [[("Host", "evil.example:40123")], [("Host", "localhost:40123")], [("Host", "127.0.0.1:40124")],
                      [("Host", "127.0.0.1")], [], [("Host", "127.0.0.1:40123"), ("Host", "127.0.0.1:40123")]])
    func everyRequestMustNameThisServer(_ host: [(String, String)]) throws {
        var browser = Browser()
        try browser.open()
        let headers = host.map { (name: $0.0, value: $0.1) }
        #expect(Self.status(browser.send("GET", "/sign-in", headers: headers)) == 421)
        #expect(Self.status(browser.send("GET", browser.openPath, headers: headers)) == 421)
    }

    @Test func aFormFromThePageGoesThroughOnceWithoutItsToken() throws {
        var browser = Browser()
        try browser.open()
        let token = try browser.pageToken()
        let body = "email=a%40example.com&password=secret&csrf_token=" + token
        #expect(browser.post("/sign-in/password", body, contentType: "application/x-www-form-urlencoded; charset=UTF-8",
                             extra: [("Sec-Fetch-Site", "same-origin")])
                == .submitted(path: "/sign-in/password", form: SignInPageForm(["email": "a@example.com", "password": "secret"])))
        // Sent again (a double click, the history): the page as it is now, and nothing done.
        guard case .respond(let again) = browser.post("/sign-in/password", body) else { Issue.record("taken twice"); return }
        #expect(again.status == 303 && again.value(of: "Location") == "/sign-in")
    }

    @Test func whatAnotherSiteCanSendIsRefusedAndUsesNothingUp() throws {
        var browser = Browser()
        try browser.open()
        let token = try browser.pageToken()
        let body = "email=a%40example.com&password=secret&csrf_token=" + token
        #expect(Self.status(browser.post("/sign-in/password", body, origin: "http://evil.example")) == 403)
        #expect(Self.status(browser.post("/sign-in/password", body, origin: "null")) == 403)
        #expect(Self.status(browser.post("/sign-in/password", body, origin: nil)) == 403)
        #expect(Self.status(browser.post("/sign-in/password", body, origin: "http://127.0.0.1:40124")) == 403)
        #expect(Self.status(browser.post("/sign-in/password", body, extra: [("Sec-Fetch-Site", "cross-site")])) == 403)
        #expect(Self.status(browser.post("/sign-in/password", body, extra: [("Origin", "http://evil.example")])) == 403)
        // The forms a page of another site may send without asking: text/plain and multipart.
        #expect(Self.status(browser.post("/sign-in/password", body, contentType: "text/plain")) == 415)
        #expect(Self.status(browser.post("/sign-in/password", body, contentType: "multipart/form-data; boundary=x")) == 415)
        #expect(Self.status(browser.send("POST", "/sign-in/password", headers: [("Host", "127.0.0.1:40123"), ("Origin", Self.origin),
                                         ("Content-Type", "application/x-www-form-urlencoded")], cookie: "x=1", body: body)) == 403)
        #expect(Self.status(browser.post("/sign-in/password", "email=a&csrf_token=" + String(repeating: "0", count: 64))) == 403)
        #expect(Self.status(browser.post("/sign-in/password", "email=a")) == 403)
        #expect(Self.status(browser.post("/sign-in/nothing", body)) == 404)
        #expect(Self.status(browser.post("/sign-in/password", body + "&x=%zz")) == 400)
        #expect(Self.status(browser.post("/sign-in/password", body + "&x=" + String(repeating: "a", count: SignInPageGate.maximumBodyBytes))) == 413)
        // None of that used the token.
        guard case .submitted = browser.post("/sign-in/password", body) else { Issue.record("the token was used up"); return }
    }

    @Test func aTokenOfAnotherPageOrAnotherGateIsRefused() throws {
        var browser = Browser()
        try browser.open()
        var other = Browser(seed: 3)
        try other.open()
        let othersToken = try other.pageToken()
        #expect(Self.status(browser.post("/sign-in/cancel", "csrf_token=" + othersToken)) == 403)
    }

    @Test func onlyTheNewestPageTokensStayGood() throws {
        var browser = Browser()
        try browser.open()
        let tokens = try (0...SignInPageGate.maximumPageTokens).map { _ in try browser.pageToken() }
        #expect(Set(tokens).count == tokens.count)
        #expect(Self.status(browser.post("/sign-in/cancel", "csrf_token=" + tokens[0])) == 403)
        guard case .submitted = browser.post("/sign-in/cancel", "csrf_token=" + tokens[1]) else { Issue.record("refused"); return }
    }

    @Test func theReturnFromAProviderNeedsItsOwnPathNotTheCookie() throws {
        var browser = Browser()
        let returnURL = browser.gate.returnURL
        #expect(returnURL.hasPrefix(Self.origin + "/sign-in/return/") && Self.isHex(returnURL.split(separator: "/").last ?? "", digits: 64))
        let path = String(returnURL.dropFirst(Self.origin.count))
        #expect(browser.send("GET", path + "?code=abc%2Bdef") == .returned(SignInPageForm(["code": "abc+def"])))
        #expect(browser.send("GET", path) == .returned(SignInPageForm()))
        #expect(Self.status(browser.send("GET", path + "?code=%zz")) == 400)
        #expect(Self.status(browser.send("GET", "/sign-in/return/" + String(repeating: "0", count: 64) + "?code=abc")) == 403)
        #expect(Self.status(browser.send("POST", path, body: "code=abc")) == 404)
    }

    @Test func secretsComeFromTheGeneratorAndNoDescriptionShowsThem() throws {
        var browser = Browser()
        try browser.open()
        let token = try browser.pageToken()
        let cookieValue = String(try #require(browser.cookie).split(separator: "=")[1])
        var system = SystemRandomNumberGenerator()
        let first = SignInPageGate(port: Self.port, using: &system), second = SignInPageGate(port: Self.port, using: &system)
        #expect(first.openURL != second.openURL && first.returnURL != second.returnURL && first.cookieName != second.cookieName)
        // Nor does a request or an answer that carries them: the opening link, the cookie, a
        // password in a form, the page with its token.
        let opening = SignInPageHTTPRequest(method: "GET", target: browser.openPath, headers: [("Cookie", try #require(browser.cookie))])
        let posted = SignInPageHTTPRequest(method: "POST", target: browser.gate.returnURL, body: Array("password=hunter2&csrf_token=\(token)".utf8))
        let answers: [SignInPageHTTPResponse] = [.seeOther("/sign-in", setting: try #require(browser.cookie)), .page("<input value=\"\(token)\">")]
        var dumped = ""
        dump(browser.gate, to: &dumped)
        for value in [opening, posted] as [Any] + answers as [Any] { dump(value, to: &dumped) }
        let described = [opening.description, posted.description] + answers.map(\.description)
        #expect(!dumped.contains("hunter2") && !described.joined().contains("hunter2"))
        for text in [String(describing: browser.gate), String(reflecting: browser.gate), dumped] + described {
            for secret in [token, cookieValue, String(browser.openPath.dropFirst(6)), String(browser.gate.returnURL.split(separator: "/").last ?? "")] {
                #expect(!text.contains(secret), "\(text)")
            }
        }
    }
}
