import Foundation

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
        if !edited.isEmpty, !edited.hasSuffix("\n") { edited += "\n" }
        if !edited.isEmpty { edited += "\n" }
        edited += "[profiles.\(name)]\nurl = \(quoted(url))\nanon_key = \(quoted(anonKey))\n"
        // settingDefault validates its result itself.
        return makeDefault ? try settingDefault(name: name, in: edited) : try validated(edited)
    }

    /// `text` without the `[profiles.<name>]` table (and without `default_profile` if it named it).
    public static func removing(name: String, from text: String) throws(ConfigurationError) -> String {
        let current = try DaemonConfiguration.parse(text, source: "config.toml")
        guard current.profiles.contains(where: { $0.name == name }) else { throw unknown(name, current) }
        var lines = text.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { tableName(of: $0) == "profiles.\(name)" }) else {
            throw ConfigurationError("the profile '\(name)' is not written as a [profiles.\(name)] table; edit config.toml by hand")
        }
        var end = start + 1
        while end < lines.count, tableName(of: lines[end]) == nil { end += 1 }
        // Keep a comment block that introduces the next table with it.
        while end - 1 > start, lines[end - 1].trimmingCharacters(in: .whitespaces).hasPrefix("#") { end -= 1 }
        lines.removeSubrange(start..<end)
        if current.defaultProfile == name {
            lines.removeAll { isDefaultProfileLine($0) }
        }
        return try validated(lines.joined(separator: "\n"))
    }

    /// `text` with `default_profile` set to `name`, which must exist.
    public static func settingDefault(name: String, in text: String) throws(ConfigurationError) -> String {
        let current = try DaemonConfiguration.parse(text, source: "config.toml")
        guard current.profiles.contains(where: { $0.name == name }) else { throw unknown(name, current) }
        var lines = text.components(separatedBy: "\n")
        let line = "default_profile = \(quoted(name))"
        let firstTable = lines.firstIndex { tableName(of: $0) != nil } ?? lines.count
        if let existing = lines[..<firstTable].firstIndex(where: isDefaultProfileLine) {
            lines[existing] = line
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

    /// Profile names become bare TOML keys and command-line words: keep them plain.
    private static func checkName(_ name: String) throws(ConfigurationError) {
        let allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
        guard !name.isEmpty, name.count <= 64, name.unicodeScalars.allSatisfy(allowed.contains) else {
            throw ConfigurationError("a profile name is 1 to 64 letters, digits, '-' or '_'")
        }
    }

    private static func unknown(_ name: String, _ configuration: DaemonConfiguration) -> ConfigurationError {
        let known = configuration.profiles.map(\.name).joined(separator: ", ")
        return ConfigurationError("no profile named '\(name)'" + (known.isEmpty ? "" : " (profiles: \(known))"))
    }

    /// The table a `[a.b]` header line opens, or nil for any other line.
    private static func tableName(of line: String) -> String? {
        var trimmed = line.trimmingCharacters(in: .whitespaces)
        if let comment = trimmed.firstIndex(of: "#") { trimmed = String(trimmed[..<comment]).trimmingCharacters(in: .whitespaces) }
        guard trimmed.hasPrefix("["), trimmed.hasSuffix("]"), !trimmed.hasPrefix("[[") else { return nil }
        return trimmed.dropFirst().dropLast().split(separator: ".").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ".")
    }

    private static func isDefaultProfileLine(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return trimmed.hasPrefix("default_profile") && trimmed.dropFirst("default_profile".count).trimmingCharacters(in: .whitespaces).hasPrefix("=")
    }

    /// A TOML basic string.
    private static func quoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
