/// Adds, removes and picks the default profile in `config.toml` by editing its text, so the
/// comments and layout the user wrote survive. Every result is parsed with
/// `DaemonConfiguration.parse` before it is handed back, so an edit can never leave a file authd
/// would refuse.
public enum ProfileFileEditor {
    /// `text` with a `[profiles.<name>]` table appended.
    public static func adding(name: String, url: String, anonKey: String, to text: String, makeDefault: Bool = false) throws(ConfigurationError) -> String {
        try checkName(name)
        _ = try ProfileConfiguration(name: name, url: url, anonKey: anonKey, source: "the new profile")
        let current = try DaemonConfiguration.parse(text, source: "config.toml")
        if current.profiles.contains(where: { $0.name == name }) {
            throw ConfigurationError("a profile named '\(name)' already exists; remove it first with 'authctl profile remove \(name)'")
        }
        var edited = text
        if !edited.isEmpty, edited.utf8.last != UInt8(ascii: "\n") { edited += "\n" }
        if !edited.isEmpty { edited += "\n" }
        edited += "[profiles.\(name)]\nurl = \(TOMLReader.quoted(url))\nanon_key = \(TOMLReader.quoted(anonKey))\n"
        // settingDefault validates its result itself.
        return makeDefault ? try settingDefault(name: name, in: edited) : try validated(edited)
    }

    /// `text` without the `[profiles.<name>]` table (and without `default_profile` if it named it).
    public static func removing(name: String, from text: String) throws(ConfigurationError) -> String {
        let current = try DaemonConfiguration.parse(text, source: "config.toml")
        guard current.profiles.contains(where: { $0.name == name }) else { throw unknown(name, current) }
        // The reader knows which line each table and key is on, however it was written
        // (`[ profiles . "x" ]`, quotes, comments), which a scan of the text by hand would not.
        let document = try read(text)
        guard let profile = document["profiles"]?.table?[name]?.table, profile.definedByHeader else {
            throw ConfigurationError("the profile '\(name)' is not written as a [profiles.\(name)] table; edit config.toml by hand")
        }
        var lines = lines(of: text)
        let start = profile.line - 1
        // The table's text runs up to the next header, whichever table that defines.
        var end = document.headerLines.filter { $0 > profile.line }.min().map { $0 - 1 } ?? lines.count
        // Keep a comment block that introduces the next table with it.
        while end - 1 > start, lines[end - 1].drop(while: { $0 == " " || $0 == "\t" }).hasPrefix("#") { end -= 1 }
        lines.removeSubrange(start..<end)
        // default_profile is a top-level key, so it is above the table and its line is unchanged.
        if current.defaultProfile == name, let line = document["default_profile"]?.line {
            lines.remove(at: line - 1)
        }
        return try validated(lines.joined(separator: "\n"))
    }

    /// `text` with `default_profile` set to `name`, which must exist.
    public static func settingDefault(name: String, in text: String) throws(ConfigurationError) -> String {
        let current = try DaemonConfiguration.parse(text, source: "config.toml")
        guard current.profiles.contains(where: { $0.name == name }) else { throw unknown(name, current) }
        var lines = lines(of: text)
        let line = "default_profile = \(TOMLReader.quoted(name))"
        if let existing = try read(text)["default_profile"]?.line {
            // The line keeps its CRLF, if the file has them.
            lines[existing - 1] = line + (lines[existing - 1].unicodeScalars.last == "\r" ? "\r" : "")
        } else if lines[0].unicodeScalars.first == "\u{FEFF}" {
            // A byte order mark stays first: anywhere else it is not TOML.
            lines[0].unicodeScalars.removeFirst()
            lines.insert("\u{FEFF}" + line, at: 0)
        } else {
            lines.insert(line, at: 0)
        }
        return try validated(lines.joined(separator: "\n"))
    }

    // MARK: Helpers

    private static func validated(_ text: String) throws(ConfigurationError) -> String {
        _ = try DaemonConfiguration.parse(text, source: "config.toml (after the edit)")
        return text
    }

    /// The tables and lines of a text that `DaemonConfiguration.parse` has accepted.
    private static func read(_ text: String) throws(ConfigurationError) -> TOMLTable {
        do throws(TOMLReader.Failure) {
            return try TOMLReader.read(text)
        } catch {
            throw ConfigurationError("config.toml:\(error.line): \(error.message)")
        }
    }

    /// The lines of `text`, split at each LF as the reader counts them. By Unicode scalars:
    /// String's characters hold CRLF as one, which a split at "\n" would not find; a line of a
    /// CRLF file keeps its CR.
    private static func lines(of text: String) -> [String] {
        text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) }
    }

    /// Profile names become bare TOML keys and command-line words: keep them plain.
    private static func checkName(_ name: String) throws(ConfigurationError) {
        let plain = name.utf8.allSatisfy(TOMLReader.isBareKeyByte)
        guard !name.isEmpty, name.count <= 64, plain else {
            throw ConfigurationError("a profile name is 1 to 64 letters, digits, '-' or '_'")
        }
    }

    private static func unknown(_ name: String, _ configuration: DaemonConfiguration) -> ConfigurationError {
        let known = configuration.profiles.map(\.name).joined(separator: ", ")
        return ConfigurationError("no profile named '\(name)'" + (known.isEmpty ? "" : " (profiles: \(known))"))
    }
}
