import AuthCore
import AuthProtocol
import Foundation
import TOMLKit

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
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
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
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigurationError("\(source):\(error.source.begin.line): \(error.description)")
        } catch {
            throw ConfigurationError("\(source): not valid TOML")
        }
        let locator = KeyLocator(text)
        for key in table.keys where !["default_profile", "refresh_lead", "sign_in_notifications", "profiles"].contains(key) {
            throw ConfigurationError("\(locator.at(source, key: key, in: "")): unknown key '\(key)' (expected default_profile, refresh_lead, sign_in_notifications or [profiles.NAME])")
        }
        var signInNotices = true
        if let value = table["sign_in_notifications"] {
            guard let enabled = value.bool else {
                throw ConfigurationError("\(locator.at(source, key: "sign_in_notifications", in: "")): sign_in_notifications must be true or false")
            }
            signInNotices = enabled
        }
        var refreshLead: TimeInterval?
        if let value = table["refresh_lead"] {
            let seconds = value.int.map(TimeInterval.init) ?? value.double
            guard let seconds, RefreshLead.allowed.contains(seconds) else {
                throw ConfigurationError("\(locator.at(source, key: "refresh_lead", in: "")): refresh_lead must be a number of seconds from 1 to \(Int(RefreshLead.allowed.upperBound))")
            }
            refreshLead = seconds
        }
        var profiles: [ProfileConfiguration] = []
        if let profileTables = table["profiles"]?.table {
            for name in profileTables.keys.sorted() {
                guard let profile = profileTables[name]?.table else {
                    throw ConfigurationError("\(locator.at(source, key: name, in: "profiles")): 'profiles.\(name)' must be a table")
                }
                for key in profile.keys where !["url", "anon_key", "access"].contains(key) {
                    throw ConfigurationError("\(locator.at(source, key: key, in: "profiles.\(name)")): unknown key 'profiles.\(name).\(key)' (expected url, anon_key, access)")
                }
                var access = AppAccessPolicy.open
                if let value = profile["access"] {
                    guard let text = value.string, let policy = AppAccessPolicy(rawValue: text) else {
                        throw ConfigurationError("\(locator.at(source, key: "access", in: "profiles.\(name)")): profiles.\(name).access must be \"open\" or \"ask\"")
                    }
                    access = policy
                }
                guard let url = profile["url"]?.string else {
                    throw ConfigurationError("\(locator.at(source, key: nil, in: "profiles.\(name)")): 'profiles.\(name).url' is missing")
                }
                guard let key = profile["anon_key"]?.string else {
                    throw ConfigurationError("\(locator.at(source, key: nil, in: "profiles.\(name)")): 'profiles.\(name).anon_key' is missing")
                }
                // Each field's message points at its own line.
                let at = { (field: String) in "\(locator.at(source, key: field, in: "profiles.\(name)")): profiles.\(name).\(field)" }
                var configured = try ProfileConfiguration(name: name, url: url, anonKey: key, urlSource: at("url"), keySource: at("anon_key"))
                configured.access = access
                profiles.append(configured)
            }
        }
        // Without default_profile: the profile named "default", else the first by name (TOML
        // tables have no order a reader can rely on).
        let defaultProfile = table["default_profile"]?.string
            ?? (profiles.contains { $0.name == "default" } ? "default" : profiles.first?.name ?? "default")
        if !profiles.isEmpty, !profiles.contains(where: { $0.name == defaultProfile }) {
            throw ConfigurationError("\(locator.at(source, key: "default_profile", in: "")): default_profile '\(defaultProfile)' is not one of the profiles")
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
            throw ConfigurationError("\(source): '\(text)' is not a URL like https://<ref>.supabase.co")
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

    static func jwtRole(_ key: String) -> String? {
        let parts = key.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        guard let data = Data(base64Encoded: payload),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        return object["role"] as? String
    }
}
