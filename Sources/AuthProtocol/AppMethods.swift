import FoundationEssentials

/// One app as authd knows it for one profile.
public struct AppRecord: Codable, Sendable, Equatable {
    /// How authd names the app: its Flatpak or Snap id when it has one, else its executable.
    public var app: String
    /// The executable the kernel reports for the app's process (`/proc/<pid>/exe`).
    public var executable: String
    /// The Flatpak or Snap app id, from the process's cgroup.
    public var appID: String?
    /// The profile.
    public var profile: String
    /// `allowed`, `denied`, `pending` (a request waits for a decision) or `open` (the profile
    /// does not ask).
    public var access: String
    /// Token requests answered to this app since authd started.
    public var requests: Int
    /// When it last got a token (seconds since 1970), if it did since authd started.
    public var lastUsed: Int64?

    /// Creates a record.
    public init(app: String, executable: String, appID: String?, profile: String, access: String, requests: Int, lastUsed: Int64?) {
        self.app = app
        self.executable = executable
        self.appID = appID
        self.profile = profile
        self.access = access
        self.requests = requests
        self.lastUsed = lastUsed
    }

    enum CodingKeys: String, CodingKey {
        case app, executable, appID = "app_id", profile, access, requests, lastUsed = "last_used"
    }
}

extension Methods {
    /// `apps.list`: the apps that asked for tokens, waiting ones first, and each profile's policy.
    public enum ListApps: RPCMethod {
        public static let name = "apps.list"
        public typealias Parameters = ProfileParameters
        /// The apps and policies.
        public struct Result: Codable, Sendable, Equatable {
            /// Apps by profile; only the requested profile when one was named.
            public var apps: [AppRecord]
            /// Each profile's policy (`open` or `ask`).
            public var policies: [String: String]
            /// The policy under which an app waits until the user allows it.
            public static let asking = "ask"
            /// Creates a result.
            public init(apps: [AppRecord], policies: [String: String]) {
                self.apps = apps
                self.policies = policies
            }
        }
    }

    /// `profiles.setDefault`: make `profile` the default for requests that name none, at once
    /// (what `authctl profile default` does after writing config.toml). Accepted only from
    /// `authctl` installed beside authd.
    public enum SetDefaultProfile: RPCMethod {
        public static let name = "profiles.setDefault"
        public typealias Parameters = ProfileParameters
        /// The default now and before.
        public struct Result: Codable, Sendable, Equatable {
            /// The default profile from now on.
            public var defaultProfile: String
            /// The one it replaced.
            public var previous: String
            /// Creates a result.
            public init(defaultProfile: String, previous: String) {
                self.defaultProfile = defaultProfile
                self.previous = previous
            }
            enum CodingKeys: String, CodingKey { case defaultProfile = "default_profile", previous }
        }
    }

    /// `apps.decide`: allow or deny an app a profile's tokens; remembered across restarts.
    /// Accepted only from `authctl` installed beside authd.
    public enum DecideApp: RPCMethod {
        public static let name = "apps.decide"
        /// The app and the decision.
        public struct Parameters: Codable, Sendable, Equatable {
            /// The profile; the default one when absent.
            public var profile: String?
            /// The app: an executable path or a Flatpak/Snap app id, as `apps.list` names it.
            public var app: String
            /// `allow` or `deny`.
            public var decision: String
            /// Creates parameters.
            public init(profile: String? = nil, app: String, decision: String) {
                self.profile = profile
                self.app = app
                self.decision = decision
            }
        }
        public typealias Result = AppRecord
    }
}
