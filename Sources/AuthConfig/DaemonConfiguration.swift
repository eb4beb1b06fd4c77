import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// One Supabase project (or account) authd keeps a session for.
public struct ProfileConfiguration: Sendable, Equatable {
    /// The profile's name (`default`, `work`, …).
    public var name: String
    /// The Supabase project URL, e.g. `https://<ref>.supabase.co` (authd appends `/auth/v1`).
    public var url: URL
    /// The project's anon or publishable key. Never a service-role or secret key.
    public var anonKey: String
    /// Which apps may take this profile's tokens: all of the user's (`open`) or the ones the
    /// user allowed (`ask`).
    public var access: AppAccessPolicy = .open

    /// Creates a profile after validating it; `source` names where it came from in messages.
    public init(name: String, url: String, anonKey: String, source: String) throws(ConfigurationError) {
        try self.init(name: name, url: url, anonKey: anonKey, urlSource: source, keySource: source)
    }

    /// Creates a profile after validating it, with a separate place (file and line) for each field.
    init(name: String, url: String, anonKey: String, urlSource: String, keySource: String) throws(ConfigurationError) {
        self.name = name
        self.url = try ConfigurationValidator.projectURL(url, source: urlSource)
        try ConfigurationValidator.checkAnonKey(anonKey, source: keySource)
        self.anonKey = anonKey
    }
}

/// Everything the daemon reads from `config.toml`, flags and the environment.
public struct DaemonConfiguration: Sendable, Equatable {
    /// The profiles, by name.
    public var profiles: [ProfileConfiguration]
    /// The profile used when a request names none.
    public var defaultProfile: String
    /// Seconds before expiry to refresh; nil for max(60 s, 10 % of the lifetime).
    public var refreshLead: TimeInterval?
    /// Whether a session the server ended brings a desktop notification offering to sign in
    /// again (`sign_in_notifications`, on by default).
    public var signInNotices: Bool

    /// Creates a configuration.
    public init(profiles: [ProfileConfiguration], defaultProfile: String, refreshLead: TimeInterval? = nil, signInNotices: Bool = true) {
        self.profiles = profiles
        self.defaultProfile = defaultProfile
        self.refreshLead = refreshLead
        self.signInNotices = signInNotices
    }

    /// `$XDG_CONFIG_HOME/authd/config.toml` (or `~/.config/authd/config.toml`).
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let base = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? HomeDirectory.fromPasswordDatabase() ?? "/") + "/.config")
        return base + "/authd/config.toml"
    }

    /// Parses a `config.toml` text. `source` names the file in error messages.
    ///
    /// ```toml
    /// default_profile = "default"
    /// refresh_lead = 120            # optional, seconds
    /// sign_in_notifications = false # optional: no "sign in again" notifications
    /// [profiles.default]
    /// url = "https://abcd.supabase.co"
    /// anon_key = "eyJ…"
    /// access = "ask"                # optional: "open" (default) or "ask"
    /// ```
    public static func parse(_ text: String, source: String) throws(ConfigurationError) -> DaemonConfiguration {
        let document: TOMLTable
        do throws(TOMLReader.Failure) {
            document = try TOMLReader.read(text)
        } catch {
            throw ConfigurationError("\(source):\(error.line): \(error.message)")
        }
        /// "config.toml:7", for what was written on line 7.
        func at(_ line: Int) -> String { "\(source):\(line)" }

        for (key, value) in document.entries where !["default_profile", "refresh_lead", "sign_in_notifications", "profiles"].contains(key) {
            throw ConfigurationError("\(at(value.line)): unknown key '\(TOMLReader.keyPath([key]))' (expected default_profile, refresh_lead, sign_in_notifications or [profiles.NAME])")
        }
        var signInNotices = true
        if let value = document["sign_in_notifications"] {
            guard let enabled = value.boolean else {
                throw ConfigurationError("\(at(value.line)): sign_in_notifications must be true or false")
            }
            signInNotices = enabled
        }
        var refreshLead: TimeInterval?
        if let value = document["refresh_lead"] {
            // An integer or a float: TOML keeps them apart, and either is a number of seconds.
            let seconds: TimeInterval? = switch value.content {
            case .integer(let whole): TimeInterval(whole)
            case .float(let fractional): fractional
            default: nil
            }
            guard let seconds, RefreshLead.allowed.contains(seconds) else {
                throw ConfigurationError("\(at(value.line)): refresh_lead must be a number of seconds from 1 to \(Int(RefreshLead.allowed.upperBound))")
            }
            refreshLead = seconds
        }
        var profiles: [ProfileConfiguration] = []
        if let value = document["profiles"] {
            guard let profileTables = value.table else {
                throw ConfigurationError("\(at(value.line)): profiles must be a table: write each profile as a [profiles.NAME] table")
            }
            for name in profileTables.keys.sorted() {
                let value = profileTables[name]!
                let path = TOMLReader.keyPath(["profiles", name])
                guard let profile = value.table else {
                    throw ConfigurationError("\(at(value.line)): '\(path)' must be a table")
                }
                for (key, value) in profile.entries where !["url", "anon_key", "access"].contains(key) {
                    throw ConfigurationError("\(at(value.line)): unknown key '\(TOMLReader.keyPath(["profiles", name, key]))' (expected url, anon_key, access)")
                }
                var access = AppAccessPolicy.open
                if let value = profile["access"] {
                    guard let text = value.string, let policy = AppAccessPolicy(rawValue: text) else {
                        throw ConfigurationError("\(at(value.line)): \(path).access must be \"open\" or \"ask\"")
                    }
                    access = policy
                }
                /// A field that must be a string: its text, and where it was written for messages.
                func field(_ key: String) throws(ConfigurationError) -> (text: String, source: String) {
                    guard let value = profile[key] else {
                        // A missing field is reported at the profile's header.
                        throw ConfigurationError("\(at(profile.line)): '\(path).\(key)' is missing")
                    }
                    guard let text = value.string else {
                        throw ConfigurationError("\(at(value.line)): \(path).\(key) must be a string in quotes")
                    }
                    // Each field's message points at its own line.
                    return (text, "\(at(value.line)): \(path).\(key)")
                }
                let url = try field("url")
                let key = try field("anon_key")
                var configured = try ProfileConfiguration(name: name, url: url.text, anonKey: key.text, urlSource: url.source, keySource: key.source)
                configured.access = access
                profiles.append(configured)
            }
        }
        // Without default_profile: the profile named "default", else the first by name (the
        // order of tables in the file is not a choice the user made on purpose).
        var defaultProfile = profiles.contains { $0.name == "default" } ? "default" : profiles.first?.name ?? "default"
        if let value = document["default_profile"] {
            guard let name = value.string else {
                throw ConfigurationError("\(at(value.line)): default_profile must be a profile's name in quotes")
            }
            if !profiles.isEmpty, !profiles.contains(where: { $0.name == name }) {
                throw ConfigurationError("\(at(value.line)): default_profile '\(name)' is not one of the profiles")
            }
            defaultProfile = name
        }
        return DaemonConfiguration(profiles: profiles, defaultProfile: defaultProfile, refreshLead: refreshLead, signInNotices: signInNotices)
    }
}

/// The range of `refresh_lead` (and `authd --refresh-lead`): a second to a day. Anything else,
/// infinities and NaN included, is a configuration error rather than a number the refresh
/// schedule would have to survive.
public enum RefreshLead {
    /// Seconds before expiry a refresh may be scheduled at.
    public static let allowed: ClosedRange<TimeInterval> = 1...86_400
}

/// A configuration problem, with the file (and line where known) in the message.
public struct ConfigurationError: Error, LocalizedError, Equatable {
    /// The message.
    public let errorDescription: String?
    /// Creates an error.
    public init(_ message: String) { errorDescription = message }
}

/// Rules every URL and key must pass, wherever it came from.
public enum ConfigurationValidator {
    /// Accepts `https://…`, and `http://` only on a loopback host.
    public static func projectURL(_ text: String, source: String) throws(ConfigurationError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            // A text with an "@" may hold a password (https://me:pw@, a missing colon): not echoed.
            let shown = text.contains("@") ? "the URL given" : "'\(text)'"
            throw ConfigurationError("\(source): \(shown) is not a URL like https://<ref>.supabase.co")
        }
        // Not echoed: the text holds a password. A project URL has no use for either part, and
        // every log line that names the server would carry them. As written, not decoded: a user
        // part that does not decode to UTF-8 reads as no user at all.
        if url.user(percentEncoded: true) != nil || url.password(percentEncoded: true) != nil {
            throw ConfigurationError("\(source): the URL carries a user name or password; give the project URL alone, like https://<ref>.supabase.co")
        }
        switch scheme {
        case "https": return url
        case "http" where LoopbackHost.contains(host): return url
        case "http": throw ConfigurationError("\(source): plain http:// is only allowed for a loopback server (127.0.0.1, ::1, localhost); use https:// for \(host)")
        default: throw ConfigurationError("\(source): unsupported URL scheme '\(scheme)'")
        }
    }

    /// Refuses service-role and secret keys: they bypass row-level security and must never live on a desktop.
    public static func checkAnonKey(_ key: String, source: String) throws(ConfigurationError) {
        if key.isEmpty { throw ConfigurationError("\(source): the anon key is empty") }
        if key.hasPrefix("sb_secret_") || jwtRole(key) == "service_role" {
            throw ConfigurationError("\(source): this is a service-role/secret key, which must never be on a desktop; use the project's anon or publishable key (Project Settings → API)")
        }
    }

    /// The `role` claim of a key that is a JWT (Supabase's legacy anon and service-role keys are),
    /// read without checking the signature: only to refuse a service-role key, never to trust one.
    static func jwtRole(_ key: String) -> String? {
        let parts = key.split(separator: ".")
        guard parts.count == 3 else { return nil }
        // base64url without padding, as JWTs write it, to the base64 Data reads.
        var payload = String(parts[1]).replacing("-", with: "+").replacing("_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        guard let data = Data(base64Encoded: payload) else { return nil }
        // A payload that is not a JSON object, or whose role is not a string, has no role.
        return TokenClaims(payload: data)?.role
    }
}
