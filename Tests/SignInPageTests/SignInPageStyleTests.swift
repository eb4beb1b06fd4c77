import Crypto
import Foundation
import SignInPage
import Testing

/// The CSP allows the stylesheet by its hash: the hash must be the stylesheet's, and the
/// stylesheet must need nothing the CSP refuses.
@Suite struct SignInPageStyleTests {
    @Test func theHashInThePolicyIsTheStylesheets() {
        let digest = Data(SHA256.hash(data: Data(SignInPageStyle.stylesheet.utf8))).base64EncodedString()
        #expect(SignInPageStyle.stylesheetHash == "sha256-" + digest,
                "the stylesheet changed: set SignInPageStyle.stylesheetHash to \"sha256-\(digest)\"")
        #expect(SignInPageStyle.contentSecurityPolicy.contains("style-src 'sha256-\(digest)'"))
    }

    @Test func thePolicyIsTheStrictOne() {
        #expect(SignInPageStyle.contentSecurityPolicy == "default-src 'none'; style-src '\(SignInPageStyle.stylesheetHash)'; "
            + "img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        #expect(!SignInPageStyle.contentSecurityPolicy.contains("unsafe"))
    }

    @Test func theStylesheetLoadsNothingAndCannotEndItsElement() {
        let css = SignInPageStyle.stylesheet.lowercased()
        for needle in ["<", "url(", "@import", "@font-face", "expression(", "javascript:"] {
            #expect(!css.contains(needle), "\(needle)")
        }
    }

    @Test func whatIsSeenIsInTheOrderTheKeyboardGoes() throws {
        // The tab order is the document's: nothing the stylesheet does may show it in another.
        let css = SignInPageStyle.stylesheet
        for property in ["order", "float", "grid-area", "direction"] {
            #expect(css.firstMatch(of: try Regex("[;{]" + property + ":")) == nil, "\(property)")
        }
        for needle in ["-reverse", "position:absolute", "position:fixed"] {
            #expect(!css.contains(needle), "\(needle)")
        }
    }

    @Test func sizesAreInRemSoThatTheyFollowTheReadersFontSize() throws {
        // Pixel sizes only for hairlines (borders, the focus ring) and shadows.
        let pixels = SignInPageStyle.stylesheet.matches(of: try Regex(#"[0-9.]+px"#)).map { String(SignInPageStyle.stylesheet[$0.range]) }
        #expect(pixels.allSatisfy { ["1px", "2px", "3px"].contains($0) }, "\(pixels)")
        #expect(SignInPageStyle.stylesheet.contains("prefers-color-scheme:dark"))
        #expect(SignInPageStyle.stylesheet.contains(":focus-visible{outline"))
    }
}
