import ArgumentParser
import AuthConfig
import AuthdClient
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// `authctl profile`: the Supabase projects authd knows, kept in config.toml.
struct Profile: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List, add, remove or pick the default profile in config.toml.",
        discussion: """
        A profile is one Supabase project (or one account in it): its URL and anon key. The file is \
        $XDG_CONFIG_HOME/authd/config.toml (see authd.conf(5)); edits keep its comments and are checked \
        with authd's own parser before they are written. Restart authd to apply them.
        """,
        subcommands: [List.self, Add.self, Remove.self, Default.self])

    /// Options every profile subcommand takes.
    struct FileOptions: ParsableArguments {
        @Option(help: "The configuration file (default: $XDG_CONFIG_HOME/authd/config.toml).")
        var config: String?

        var path: String { config ?? DaemonConfiguration.defaultPath() }

        func read() throws -> String {
            guard FileManager.default.fileExists(atPath: path) else { return "" }
            do { return try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw Failure("cannot read \(path): \(error.readableDescription)", .failure)
            }
        }

        /// Replaces the file atomically (a temporary file renamed over it), creating its directory.
        func write(_ text: String) throws {
            let directory = path.pathDirectory
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw Failure("cannot write \(path): \(error.readableDescription)", .failure)
            }
        }

        /// Applies `edit` to the file and says so, with how to apply it unless the caller does.
        func apply(_ done: String, tellingHowToApply: Bool = true, _ edit: (String) throws(ConfigurationError) -> String) throws {
            let edited: String
            do { edited = try edit(try read()) } catch let error as ConfigurationError {
                throw Failure(error.readableDescription, .failure)
            }
            try write(edited)
            let next = tellingHowToApply ? " Restart authd to apply: systemctl --user restart authd" : ""
            StandardStreams.writeError("\(done) in \(path).\(next)\n")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the profiles (the default is marked with *).")
        @OptionGroup var file: FileOptions
        @Flag(help: "Print one JSON object per profile.")
        var json = false

        func run() throws {
            try runReporting {
                let configuration: DaemonConfiguration
                do { configuration = try DaemonConfiguration.parse(try file.read(), source: file.path) } catch let error as ConfigurationError {
                    throw Failure(error.readableDescription, .failure)
                }
                if configuration.profiles.isEmpty, !json {
                    StandardStreams.writeError("No profiles yet. Add one with: authctl profile add NAME --url https://<ref>.supabase.co --anon-key KEY\n")
                }
                for profile in configuration.profiles {
                    let isDefault = profile.name == configuration.defaultProfile
                    if json {
                        try printJSON(ProfileLine(name: profile.name, url: profile.url.absoluteString, isDefault: isDefault))
                    } else {
                        print("\(isDefault ? "*" : " ") \(profile.name.escapedForTerminal)\t\(profile.url.absoluteString.escapedForTerminal)")
                    }
                }
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a profile: the project URL and its anon (publishable) key.")
        @OptionGroup var file: FileOptions
        @Argument(help: "The profile's name (letters, digits, '-' and '_').")
        var name: String
        @Option(help: "The Supabase project URL (Project Settings, API).")
        var url: String
        @Option(name: .customLong("anon-key"), help: "The project's anon or publishable key; never the service-role or secret key.")
        var anonKey: String
        @Flag(name: .customLong("default"), help: "Make it the default profile.")
        var makeDefault = false

        func run() throws {
            try runReporting {
                try file.apply("Added profile \(name)") { text throws(ConfigurationError) in
                    try ProfileFileEditor.adding(name: name, url: url, anonKey: anonKey, to: text, makeDefault: makeDefault)
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a profile (its stored session stays in the keyring until you sign out).")
        @OptionGroup var file: FileOptions
        @Argument(help: "The profile to remove.")
        var name: String

        func run() throws {
            try runReporting {
                try file.apply("Removed profile \(name)") { text throws(ConfigurationError) in
                    try ProfileFileEditor.removing(name: name, from: text)
                }
            }
        }
    }

    struct Default: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a profile the default.",
            discussion: "Written to config.toml and, when authd runs, applied at once: requests that name no profile go to it from then on.")
        @OptionGroup var file: FileOptions
        @Option(help: "The daemon's socket (default: $AUTHD_SOCKET or $XDG_RUNTIME_DIR/authd/authd.sock).")
        var socket: String?
        @Argument(help: "The profile to use when none is named.")
        var name: String

        func run() throws {
            try runReporting {
                try file.apply("Made \(name) the default profile", tellingHowToApply: false) { text throws(ConfigurationError) in
                    try ProfileFileEditor.settingDefault(name: name, in: text)
                }
                // The running daemon switches now; one that is not running reads the file when it starts.
                let connection: AuthdConnection
                do { connection = try AuthdConnection.connect(socketPath: socket) } catch AuthdError.daemonUnavailable {
                    note("authd is not running; it uses \(name.escapedForTerminal) when it starts.")
                    return
                }
                do {
                    let switched = try connection.call(Methods.SetDefaultProfile.self, ProfileParameters(profile: name), timeout: 30)
                    note("authd now uses \(switched.defaultProfile.escapedForTerminal) when no profile is named (it was \(switched.previous.escapedForTerminal)).")
                } catch AuthdError.unknownProfile {
                    note("authd does not serve \(name.escapedForTerminal) yet (it was added since it started): systemctl --user restart authd")
                } catch {
                    // An authd older than this authctl, or this is not the authctl installed with it.
                    note("authd did not switch (\(error.readableDescription.escapedForTerminal)); restart it to apply: systemctl --user restart authd")
                }
            }
        }
    }
}

/// One line of `authctl profile list --json`.
private struct ProfileLine: Encodable {
    let name: String
    let url: String
    let isDefault: Bool
    enum CodingKeys: String, CodingKey { case name, url, isDefault = "default" }
}
