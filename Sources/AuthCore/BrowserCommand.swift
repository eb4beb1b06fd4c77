import FoundationEssentials

/// How desktop tools open a URL in the user's browser: each command of `$BROWSER` in turn
/// (colon-separated, `%s` standing for the URL, else the URL added as the last word), then
/// `xdg-open`. Each becomes a `/bin/sh` command line that checks that the program exists and
/// leaves it running in the background, since a browser (or xdg-open) may stay up for as long
/// as the user browses: the shell's exit status says whether it started. The URL is never part
/// of the script: it is the shell's `$1`, so no character in it is read as shell syntax.
public enum BrowserCommand {
    /// The `/bin/sh` argument vectors to try, in order, to open `url` in the environment
    /// `environment`; the first that exits 0 has started a browser.
    public static func candidates(for url: String, environment: [String: String]) -> [[String]] {
        let browser = environment["BROWSER"].map { $0.split(separator: ":").map(String.init) } ?? []
        return (browser + ["xdg-open"]).filter { !$0.isEmpty }.map { command in
            let program = command.split(separator: " ").first.map(String.init) ?? command
            let line = command.contains("%s") ? placeholderReplaced(command) : "\(command) \"$1\""
            let script = "command -v \(program) >/dev/null 2>&1 || exit 127; \(line) </dev/null >/dev/null 2>&1 &"
            return ["/bin/sh", "-c", script, "sh", url]
        }
    }

    /// `command` with its URL placeholder as the shell's `"$1"`: `%s`, or `'%s'` and `"%s"`
    /// quoted as people write them (inside quotes `"$1"` would be the text `$1`); `%%` is `%`.
    static func placeholderReplaced(_ command: String) -> String {
        command.replacing("'%s'", with: "%s").replacing("\"%s\"", with: "%s")
            .split(separator: "%%", omittingEmptySubsequences: false)
            .map { $0.replacing("%s", with: "\"$1\"") }
            .joined(separator: "%")
    }

    /// Whether `environment` has a graphical session to show a browser on (an X or Wayland
    /// display), or a `$BROWSER` the user chose, which may be one for a terminal.
    public static func hasBrowser(environment: [String: String]) -> Bool {
        ["DISPLAY", "WAYLAND_DISPLAY", "BROWSER"].contains { !(environment[$0] ?? "").isEmpty }
    }
}
