import Foundation
@testable import SignInPage
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
            .secondFactor(.phone(number: text)), .enrollTOTP(qrImage: url, secret: text),
            .enrollTOTP(qrImage: "data:text/html," + text, secret: text), .leaving(to: url, name: text),
            .leaving(to: "https://example.com/\"><script>", name: text), .signedIn(who: text), .ended(.failed), .ended(.stoppedSignedIn(who: text)),
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

    @Test func theServersSVGIsShownAsAnImageAndNothingElseIs() throws {
        func imageSource(_ qrImage: String) -> String? {
            let (tags, _) = HTMLTag.read(SignInPageRenderer.render(SignInPageSamples.view(.enrollTOTP(qrImage: qrImage, secret: "JBSWY3DPEHPK3PXP"))))
            return tags.first { $0.name == "img" }?["src"]
        }
        // What GoTrue sends (an SVG document), as base64 in a data: URI, byte for byte.
        let source = try #require(imageSource(QRSample.svg))
        #expect(source == "data:image/svg+xml;base64," + Data(QRSample.svg.utf8).base64EncodedString())
        #expect(imageSource("<svg xmlns=\"http://www.w3.org/2000/svg\"/>") == "data:image/svg+xml;base64,"
            + Data("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8).base64EncodedString())
        // A data: URI, as a client library makes of it: `#` would end the URL, so it is percent-encoded.
        let uri = "data:image/svg+xml;utf-8," + QRSample.svg
        #expect(imageSource(uri) == uri.replacing("#", with: "%23"))
        for other in ["https://example.com/qr.svg", "data:image/png;base64,AAAA", "DATA:text/html,<svg>", " data:image/svg+xml,x", "",
                      "<html><svg/></html>", "javascript:alert(1)"] {
            let html = SignInPageRenderer.render(SignInPageSamples.view(.enrollTOTP(qrImage: other, secret: "JBSWY3DPEHPK3PXP")))
            #expect(!html.contains("<img"), "\(other)")
            #expect(html.contains("JBSWY3DPEHPK3PXP"))
        }
    }

    /// The two hostile values the page does use: an SVG data: URI that tries to end the attribute,
    /// which stays one attribute's value, and nothing else.
    @Test func anAcceptedImageCannotEndItsAttribute() throws {
        let hostile = "data:image/svg+xml,\"><script>alert(1)</script><svg onload=alert(2)>"
        let html = SignInPageRenderer.render(SignInPageSamples.view(.enrollTOTP(qrImage: hostile, secret: "JBSWY3DPEHPK3PXP")))
        let (tags, unreadable) = HTMLTag.read(html)
        #expect(unreadable.isEmpty)
        #expect(tags.first { $0.name == "img" }?["src"] == hostile)
        #expect(!tags.contains { $0.name == "script" || $0.name == "svg" })
    }

    @Test func aFormPostsOnlyToAPathOnThisServer() {
        for path in ["/sign-in/password", "/a?b=c"] { #expect(SignInPageRenderer.sameOriginPath(path) == path) }
        // What a browser reads as another host: `//host`, `\` as `/`, tabs and line breaks dropped.
        for path in ["//evil.example/x", "/\\evil.example/x", "/\t/evil.example/x", "/\n/evil.example", "/\r/evil.example",
                     "/a\\b", "javascript:alert(1)", "https://evil.example/", ""] {
            #expect(SignInPageRenderer.sameOriginPath(path) == "/", "\(path)")
        }
    }

    @Test func base64IsFoundationsForEveryLengthModuloThree() {
        for text in ["", "a", "ab", "abc", "abcd", "\u{0}\u{FF}é€𝄞", QRSample.svg] {
            #expect(SignInPageRenderer.base64(Array(text.utf8)) == Data(text.utf8).base64EncodedString(), "\(text.prefix(8))")
        }
    }

    @Test func onlyAnHTTPSOrLoopbackDestinationIsFollowed() {
        let followed = ["https://example.supabase.co/auth/v1/authorize?provider=github&x=1",
                        "http://127.0.0.1:54321/auth/v1/authorize", "http://localhost:9999/authorize", "http://[::1]:8080/x",
                        "http://127.0.0.1/", "http://localhost", "https://idp.example.com:8443/saml?x=1#y"]
        // A user name makes what comes before the `@` part of it: the host is the one after it.
        let refused = ["javascript:alert(1)", "http://example.com/", "https://x/ y", "https://x/\"onload=", "data:text/html,hi",
                       "//example.com", "HTTPS://x/\u{7F}", "http://127.0.0.1:@evil.example/x", "http://localhost:@evil.example/",
                       "http://[::1]:@evil.example/", "http://127.0.0.1.evil.example/", "https://user@example.com/",
                       "https://user:pw@example.com/", "http://127.0.0.1:123456/", "http://127.0.0.1:/", "https:///path",
                       "http://localhost%40evil.example/"]
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
