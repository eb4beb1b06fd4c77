import AuthCore
import Testing

/// How a URL is handed to the user's browser: `$BROWSER`'s commands in turn, then xdg-open, each
/// a shell line that never holds the URL itself.
@Suite struct BrowserCommandTests {
    static let url = "http://127.0.0.1:4/sign-in/open/x'; rm -rf ~ #"

    /// The command part of each candidate's script, and the URL each passes.
    static func lines(_ browser: String?) -> [String] {
        BrowserCommand.candidates(for: url, environment: browser.map { ["BROWSER": $0] } ?? [:]).map { argv in
            #expect(argv.count == 5 && argv[0] == "/bin/sh" && argv[4] == url, "\(argv)")
            #expect(!argv[2].contains(url), "the URL is the shell's $1, never part of its script")
            let script = argv[2]
            let start = script.range(of: "exit 127; ")!.upperBound
            return String(script[start...].prefix { $0 != "<" }).trimmingCharacters(in: .whitespaces)
        }
    }

    @Test func eachBrowserCommandThenXdgOpenWithTheURLAsOneArgument() {
        #expect(Self.lines(nil) == [#"xdg-open "$1""#])
        #expect(Self.lines("firefox:chromium --new-window") == [#"firefox "$1""#, #"chromium --new-window "$1""#, #"xdg-open "$1""#])
        #expect(Self.lines("") == [#"xdg-open "$1""#])
    }

    @Test func thePlaceholderQuotedOrNotIsTheURLAndPercentPercentIsAPercent() {
        #expect(Self.lines("firefox %s") == [#"firefox "$1""#, #"xdg-open "$1""#])
        #expect(Self.lines("firefox '%s'") == [#"firefox "$1""#, #"xdg-open "$1""#])
        #expect(Self.lines(#"firefox "%s" --zoom 100%%"#) == [#"firefox "$1" --zoom 100%"#, #"xdg-open "$1""#])
    }

    @Test func aBrowserIsThereWithADisplayOrOneTheUserNamed() {
        #expect(!BrowserCommand.hasBrowser(environment: [:]))
        #expect(!BrowserCommand.hasBrowser(environment: ["DISPLAY": ""]))
        #expect(BrowserCommand.hasBrowser(environment: ["WAYLAND_DISPLAY": "wayland-0"]))
        #expect(BrowserCommand.hasBrowser(environment: ["BROWSER": "w3m"]))
    }
}
