import FoundationEssentials

/// Who may take a profile's tokens.
public enum AppAccessPolicy: String, Codable, Sendable, CaseIterable {
    /// Every process of the user, as with ssh-agent (the default).
    case open
    /// An app's first token request waits until the user allows it (`authctl apps allow`).
    case ask
}

/// An app as far as one profile's access is concerned.
public struct AppKey: Hashable, Sendable, Codable {
    /// The app's name: its Flatpak or Snap id, else its executable path.
    public var app: String
    /// The profile.
    public var profile: String

    /// Creates a key.
    public init(app: String, profile: String) {
        self.app = app
        self.profile = profile
    }
}

/// What the user said about an app.
public enum AppDecision: String, Codable, Sendable {
    case allowed, denied
}

/// The per-app access rules, without I/O or clocks: which app may take which profile's tokens,
/// which ones wait for the user, and which ones used a profile and when.
///
/// With a profile that does not ask, every app of the user is let through (as ssh-agent does);
/// with one that asks, an app gets tokens once allowed, never once denied, and waits otherwise.
public struct AppAccessBook: Sendable {
    /// What the user decided, by app and profile: the part that is remembered across restarts.
    public private(set) var decisions: [AppKey: AppDecision]
    private var usage: [AppKey: Usage] = [:]
    private var waiting: [AppKey: Int] = [:]

    /// What an app did with a profile since the daemon started.
    public struct Usage: Sendable, Equatable {
        /// The app's executable (for an app known by its Flatpak or Snap id too).
        public var executable: String
        /// Its Flatpak or Snap id.
        public var appID: String?
        /// Tokens handed to it.
        public var requests: Int
        /// When it last got one.
        public var lastUsed: Date?

        /// Creates a usage record.
        public init(executable: String, appID: String?, requests: Int = 0, lastUsed: Date? = nil) {
            self.executable = executable
            self.appID = appID
            self.requests = requests
            self.lastUsed = lastUsed
        }

        /// The app got a token at `now`.
        mutating func noteHandOut(at now: Date) {
            requests += 1
            lastUsed = now
        }
    }

    /// The answer to a token request.
    public enum Verdict: Equatable, Sendable {
        /// Hand out the token.
        case allow
        /// Refuse: the user denied this app.
        case deny
        /// Wait for the user's decision.
        case ask
    }

    /// Creates a book with remembered decisions.
    public init(decisions: [AppKey: AppDecision] = [:]) {
        self.decisions = decisions
    }

    /// The verdict for `key`'s token request under a profile that asks (`asks`) or not.
    public func verdict(for key: AppKey, asks: Bool) -> Verdict {
        switch decisions[key] {
        case .denied?: return .deny
        case .allowed?: return .allow
        case nil: return asks ? .ask : .allow
        }
    }

    /// Records the user's decision; true when it changed anything.
    @discardableResult
    public mutating func decide(_ key: AppKey, _ decision: AppDecision) -> Bool {
        defer { decisions[key] = decision }
        return decisions[key] != decision
    }

    /// Notes that `key` asked for a token (an app seen before is kept with its latest executable).
    public mutating func noteRequest(_ key: AppKey, executable: String, appID: String?) {
        usage[key, default: Usage(executable: executable, appID: appID)].executable = executable
    }

    /// Notes that `key` got a token at `now`.
    public mutating func noteTokenHandedOut(_ key: AppKey, at now: Date) {
        usage[key]?.noteHandOut(at: now)
    }

    /// A token request of `key` answered at once if the verdict is to allow it: noted as a
    /// request and as a token handed out at `now` in one step, so the event loop's path looks the
    /// app up once. False, noting nothing, when the request needs a decision or is refused.
    public mutating func handOutAtOnce(_ key: AppKey, asks: Bool, executable: String, appID: String?, at now: Date) -> Bool {
        guard verdict(for: key, asks: asks) == .allow else { return false }
        // One lookup: both changes go through the dictionary entry in place.
        let note = { (entry: inout Usage) in
            entry.executable = executable
            entry.noteHandOut(at: now)
        }
        note(&usage[key, default: Usage(executable: executable, appID: appID)])
        return true
    }

    /// A request of `key` starts waiting for a decision; true when it is the first one waiting
    /// (the moment to tell the user).
    public mutating func startWaiting(_ key: AppKey) -> Bool {
        waiting[key, default: 0] += 1
        return waiting[key] == 1
    }

    /// How many requests of `key` wait for a decision now.
    public func waitingRequests(_ key: AppKey) -> Int {
        waiting[key] ?? 0
    }

    /// A waiting request of `key` got its answer or gave up.
    public mutating func stopWaiting(_ key: AppKey) {
        waiting[key] = (waiting[key] ?? 1) - 1
        if waiting[key] == 0 { waiting[key] = nil }
    }

    /// One entry per app and profile seen or decided: those waiting first, then by profile and name.
    public func entries(asks: (String) -> Bool) -> [(key: AppKey, usage: Usage?, access: String)] {
        let keys = Set(usage.keys).union(decisions.keys)
        return keys.map { key -> (key: AppKey, usage: Usage?, access: String) in
            let access: String
            if let decision = decisions[key] { access = decision.rawValue }
            else { access = waiting[key] != nil || asks(key.profile) ? "pending" : "open" }
            return (key, usage[key], access)
        }.sorted { left, right in
            let (leftWaits, rightWaits) = (waiting[left.key] != nil, waiting[right.key] != nil)
            if leftWaits != rightWaits { return leftWaits }
            return (left.key.profile, left.key.app) < (right.key.profile, right.key.app)
        }
    }
}
