import Foundation
import SignInPage
import Testing

/// Writes every sample step's page to `$SIGN_IN_PAGE_PREVIEW_DIR` (one `NAME.html` each, and the
/// CSP beside them), to look at or screenshot (`scripts/sign-in-page-screenshots`). Does nothing
/// unless the variable is set.
@Suite struct SignInPagePreviewWriter {
    static let folder = ProcessInfo.processInfo.environment["SIGN_IN_PAGE_PREVIEW_DIR"]

    @Test(.enabled(if: folder != nil, "set SIGN_IN_PAGE_PREVIEW_DIR to write the previews"))
    func writeEveryStep() throws {
        let folder = URL(fileURLWithPath: try #require(Self.folder), isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, view) in SignInPageSamples.all {
            try Data(SignInPageRenderer.render(view).utf8).write(to: folder.appendingPathComponent(name + ".html"))
        }
        try Data((SignInPageStyle.contentSecurityPolicy + "\n").utf8).write(to: folder.appendingPathComponent("csp.txt"))
    }
}
