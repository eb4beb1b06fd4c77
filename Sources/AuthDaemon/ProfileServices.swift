import AuthProtocol
import ServiceLifecycle

/// Everything the daemon runs for one profile: the session's life (`SessionDriver`), the calls
/// to the server on the user's behalf (`AccountOperations`) and the browser sign-ins
/// (`BrowserSignIns`). Run as one service.
public struct ProfileServices: Service {
    /// The session's life.
    public let session: SessionDriver
    /// Sign-ins, sign-ups, codes, the user's record, the server check.
    public let accounts: AccountOperations
    /// Browser sign-ins with PKCE.
    public let browser: BrowserSignIns
    /// The access token's claims, checked against the project's published keys.
    public let claims: ClaimsReader

    /// The profile's name.
    public var profile: String { session.profile }

    /// Creates the services of `session`'s profile, with its server, clocks and logger.
    public init(session: SessionDriver) {
        self.session = session
        accounts = AccountOperations(session: session, api: session.api, server: session.server, clock: session.clock, logger: session.logger)
        browser = BrowserSignIns(accounts: accounts, api: session.api, clock: session.clock, monotonic: session.monotonic,
                                 logger: session.logger)
        claims = ClaimsReader(api: session.api, clock: session.clock, logger: session.logger)
    }

    /// Runs the session and the browser sign-ins' timers until cancelled or a graceful shutdown.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await session.run() }
            group.addTask { await browser.run() }
        }
    }
}

/// The profiles the daemon serves.
public struct ProfileRegistry: Sendable {
    /// The profiles by name.
    public let byName: [String: ProfileServices]
    /// The profile used when a request names none.
    public let defaultProfile: String

    /// Creates a registry.
    public init(profiles: [ProfileServices], defaultProfile: String) {
        self.byName = Dictionary(uniqueKeysWithValues: profiles.map { ($0.profile, $0) })
        self.defaultProfile = defaultProfile
    }

    /// Every profile, in name order.
    public var profiles: [ProfileServices] { byName.keys.sorted().compactMap { byName[$0] } }

    /// Every profile's session driver, in name order.
    public var sessions: [SessionDriver] { profiles.map(\.session) }

    /// The profile `name` (or the default one), or the error to answer.
    public func profile(_ name: String?) throws(RPCErrorObject) -> ProfileServices {
        let wanted = name ?? defaultProfile
        guard let profile = byName[wanted] else {
            throw .application(.unknownProfile, "no profile named '\(wanted.prefix(64))'; configured: \(byName.keys.sorted().joined(separator: ", "))")
        }
        return profile
    }
}
