import AuthCore
import FoundationEssentials
import Glibc
import FoundationGaps

/// Where the user's app decisions are kept between runs: a JSON file only the user can read,
/// `$XDG_STATE_HOME/authd/apps.json` by default. Written whole to a temporary file and renamed,
/// so a crash never leaves half a file.
public struct AppDecisionFile: Sendable {
    /// The file's path.
    public let path: String

    /// Creates a store at `path`.
    public init(path: String) { self.path = path }

    /// `$XDG_STATE_HOME/authd/apps.json` (or `~/.local/state/authd/apps.json`); under systemd,
    /// the unit's `StateDirectory=`, which is the same folder made writable in a read-only home.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let directory = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !directory.isEmpty {
            return directory + "/apps.json"
        }
        let base = environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"] ?? HomeDirectory.current) + "/.local/state")
        return base + "/authd/apps.json"
    }

    private struct Entry: Codable {
        var profile: String
        var app: String
        var decision: AppDecision
    }

    private struct Contents: Codable {
        var decisions: [Entry]
    }

    /// The remembered decisions; none when the file does not exist.
    public func load() throws -> [AppKey: AppDecision] {
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        let contents = try JSONDecoder().decode(Contents.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        return Dictionary(contents.decisions.map { (AppKey(app: $0.app, profile: $0.profile), $0.decision) }) { _, last in last }
    }

    /// Replaces the file with `decisions`.
    public func save(_ decisions: [AppKey: AppDecision]) throws {
        let entries = decisions.map { Entry(profile: $0.key.profile, app: $0.key.app, decision: $0.value) }
            .sorted { ($0.profile, $0.app) < ($1.profile, $1.app) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(Contents(decisions: entries))
        let directory = path.pathDirectory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw WriteFailure(errorDescription: "cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            throw WriteFailure(errorDescription: "cannot replace \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Why the file could not be saved.
    struct WriteFailure: LocalizedError {
        var errorDescription: String?
    }
}
