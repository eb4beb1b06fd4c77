import SignInPage
import Testing

/// Hostile values everywhere a value goes: none comes out as markup, a link or an image.
@Suite struct SignInPageEscapingTests {
    static let hostile = #"Evil"><script>alert(1)</script><img src=x onerror=alert(2)>&amp;'"#
    static let hostileURL = "javascript:alert(document.cookie)//"

    /// Every step of `SignInPageSamples`, with every value in it replaced by `text`.
    static func views(_ text: String, url: String) -> [SignInPageView] {
        let methods = SignInPageView.Methods(password: true, forgotPassword: true, signUp: true, emailCode: true, smsCode: true,
                                             sso: true, anonymous: true,
                                    providers: [SignInPageView.Provider(id: text, name: text), SignInPageView.Provider(id: url, name: url)])
        let steps: [SignInPageView.Step] = [
            .choose(methods, email: text), .signUp(email: text), .checkInbox(email: text),
            .requestCode(.email, destination: text), .requestCode(.sms, destination: text),
            .enterCode(.email, destination: text), .ssoDomain(domain: text), .forgotPassword(email: text),
            .resetPassword(email: text), .secondFactor(.phone(number: text)), .enrollTOTP(qrImage: url, secret: text),
            .enrollTOTP(qrImage: "data:text/html," + text, secret: text), .leaving(to: url, name: text),
            .leaving(to: "https://example.com/\"><script>", name: text), .signedIn(who: text), .ended(.failed),
            .waiting(message: text), .recoveryCode(email: text), .newPassword(email: text),
            .chooseSecondFactor([SignInPageView.Factor(id: text, label: text), SignInPageView.Factor(id: url, label: url)]),
            .secondFactor(.phone(number: text), enrolling: true), .offerEnrolment(phone: true), .enrollPhone(number: text),
        ]
        var actions = SignInPageView.FormActions(base: "/sign-in" + text)
        actions.go = url
        return steps.flatMap { step in
            [SignInPageView.Problem(text), SignInPageView.Problem(text, field: .email)].map { error in
                SignInPageView(project: SignInPageView.Project(name: text, host: text), step: step, error: error, csrfToken: text,
                               actions: actions, language: text)
            }
        }
    }

    @Test func hostileValuesComeOutAsTextInTheSameMarkupAsBenignOnes() {
        let benign = Self.views("plain", url: "plain").map(SignInPageRenderer.render)
        let hostile = Self.views(Self.hostile, url: Self.hostileURL).map(SignInPageRenderer.render)
        for (plain, evil) in zip(benign, hostile) {
            let (plainTags, _) = HTMLTag.read(plain)
            let (evilTags, unreadable) = HTMLTag.read(evil)
            #expect(unreadable.isEmpty)
            // The same elements with the same attributes: the values changed, the structure did not.
            #expect(evilTags.map(\.name) == plainTags.map(\.name))
            #expect(evilTags.map { $0.attributes.map(\.name) } == plainTags.map { $0.attributes.map(\.name) })
            #expect(!evil.lowercased().contains("<script"))
            #expect(!evil.lowercased().contains("<img src=x"))
            for tag in evilTags {
                for attribute in tag.attributes where ["href", "src", "content"].contains(attribute.name) {
                    #expect(!attribute.value.lowercased().contains("javascript:"), "\(tag)")
                }
                // The only refresh left is the waiting page's, which reloads itself.
                #expect(tag.name != "img" && (tag["http-equiv"] == nil || tag["content"] == "2"),
                        "a hostile QR image or destination was used: \(tag)")
            }
        }
    }

    @Test func valuesReadBackAsTheyWereGiven() {
        let view = Self.views(Self.hostile, url: Self.hostileURL)[0]
        let (tags, _) = HTMLTag.read(SignInPageRenderer.render(view))
        #expect(tags.first { $0.name == "html" }?["lang"] == Self.hostile)
        #expect(tags.first { $0["name"] == "csrf_token" }?["value"] == Self.hostile)
        #expect(tags.first { $0["name"] == "email" }?["value"] == Self.hostile)
        #expect(tags.contains { $0["name"] == "provider" && $0["value"] == Self.hostileURL })
    }

    @Test func controlCharactersDoNotReachThePage() {
        let view = SignInPageSamples.view(.signedIn(who: "ada\u{0}\u{1B}[31m\u{7F}@example.com\u{85}"))
        let html = SignInPageRenderer.render(view)
        #expect(!html.unicodeScalars.contains { $0.value < 0x09 || $0.value == 0x1B || (0x7F...0x9F).contains($0.value) })
        #expect(html.contains("ada\u{FFFD}\u{FFFD}[31m\u{FFFD}@example.com\u{FFFD}"))
    }

    @Test func theQRImageIsShownOnlyWhenItIsAnSVGDataURI() throws {
        let (tags, _) = HTMLTag.read(SignInPageRenderer.render(SignInPageSamples.view(
            .enrollTOTP(qrImage: SignInPageSamples.qrImage, secret: "JBSWY3DPEHPK3PXP"))))
        let image = try #require(tags.first { $0.name == "img" })
        // `#` would end the URL: the colours in GoTrue's SVG are percent-encoded.
        #expect(image["src"] == SignInPageSamples.qrImage.replacing("#", with: "%23"))
        #expect(image["alt"]?.isEmpty == false)
        for other in ["https://example.com/qr.svg", "data:image/png;base64,AAAA", "DATA:text/html,<svg>", " data:image/svg+xml,x", ""] {
            let html = SignInPageRenderer.render(SignInPageSamples.view(.enrollTOTP(qrImage: other, secret: "JBSWY3DPEHPK3PXP")))
            #expect(!html.contains("<img"), "\(other)")
            #expect(html.contains("JBSWY3DPEHPK3PXP"))
        }
    }

    @Test func onlyAnHTTPSOrLoopbackDestinationIsFollowed() {
        let followed = ["https://example.supabase.co/auth/v1/authorize?provider=github&x=1",
                        "http://127.0.0.1:54321/auth/v1/authorize", "http://localhost:9999/authorize"]
        let refused = ["javascript:alert(1)", "http://example.com/", "https://x/ y", "https://x/\"onload=", "data:text/html,hi",
                       "//example.com", "HTTPS://x/\u{7F}"]
        for destination in followed {
            let (tags, _) = HTMLTag.read(SignInPageRenderer.render(SignInPageSamples.view(.leaving(to: destination, name: "GitHub"))))
            #expect(tags.first { $0.name == "a" }?["href"] == destination)
            #expect(tags.first { $0["http-equiv"] == "refresh" }?["content"] == "0; url=" + destination)
        }
        for destination in refused {
            let html = SignInPageRenderer.render(SignInPageSamples.view(.leaving(to: destination, name: "GitHub")))
            #expect(!html.contains("href=") && !html.contains("http-equiv"), "\(destination)")
        }
    }
}
