import AuthCore
import AuthProtocol
import FoundationEssentials
import ServiceLifecycle
import SignInPage
import Synchronization

/// Everything the daemon runs for one profile: the session's life (`SessionDriver`), the calls
/// to the server on the user's behalf (`AccountOperations`), the browser sign-ins
/// (`BrowserSignIns`) and authd's own sign-in pages (`InteractiveSignIns`). Run as one service.
public struct ProfileServices: Service, CustomStringConvertible {
    /// The session's life.
    public let session: SessionDriver
    /// Sign-ins, sign-ups, codes, the user's record, the server check.
    public let accounts: AccountOperations
    /// Browser sign-ins with PKCE.
    public let browser: BrowserSignIns
    /// authd's own sign-in pages in the user's browser.
    public let pages: InteractiveSignIns
    /// The access token's claims, checked against the project's published keys.
    public let claims: ClaimsReader
    /// `daemon.checkServer`, with calls sharing one request and a recent answer reused.
    public let serverCheck: ServerCheck

    /// The profile's name.
    public var profile: String { session.profile }

    /// The name ServiceLifecycle logs the service under. Without it, the group would print every
    /// field (the server client with its anon key and proxy among them) through reflection, which
    /// also costs a scan of every protocol conformance in the executable for each field's type at
    /// start-up.
    public var description: String { "ProfileServices(\(profile))" }

    /// Creates the services of `session`'s profile, with its server, clocks and logger; its
    /// sign-in pages are served through `pages` and opened with `browserOpener` (none: this
    /// daemon serves no page), and `signInAgain`, the starter the session's "sign in again"
    /// notices use, is given them to open.
    public init(session: SessionDriver, pages listening: (any SignInPageListening)? = nil, browserOpener: (any BrowserOpener)? = nil,
                signInAgain: SignInAgainStarter? = nil) {
        self.session = session
        accounts = AccountOperations(session: session, api: session.api, server: session.server, clock: session.clock, logger: session.logger)
        browser = BrowserSignIns(accounts: accounts, api: session.api, clock: session.clock, monotonic: session.monotonic,
                                 logger: session.logger)
        let host = URL(string: session.server)?.host ?? session.server
        pages = InteractiveSignIns(project: SignInPageView.Project(name: session.profile, host: host), accounts: accounts, browser: browser,
                                   listening: listening, opener: browserOpener)
        signInAgain?.serve(pages)
        claims = ClaimsReader(api: session.api, clock: session.clock, logger: session.logger)
        serverCheck = ServerCheck(accounts: accounts, monotonic: session.monotonic)
    }

    /// Runs the session, the browser sign-ins (which answer their waiters when authd stops) and
    /// the sign-in pages until cancelled or a graceful shutdown.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await session.run() }
            group.addTask { await browser.run() }
            group.addTask { await pages.run() }
        }
    }
}

/// The profiles the daemon serves.
public struct ProfileRegistry: Sendable {
    /// The profiles by name.
    public let byName: [String: ProfileServices]
    /// The default, shared by every copy of the registry: `authctl profile default` changes it
    /// while the daemon runs.
    private let chosenDefault: DefaultProfileChoice

    /// The profile used when a request names none.
    public var defaultProfile: String { chosenDefault.name.withLock { $0 } }

    /// Creates a registry.
    public init(profiles: [ProfileServices], defaultProfile: String) {
        self.byName = Dictionary(uniqueKeysWithValues: profiles.map { ($0.profile, $0) })
        self.chosenDefault = DefaultProfileChoice(name: Mutex(defaultProfile))
    }

    /// Makes `name`, one of the profiles served, the default for requests that name none from
    /// now on; returns the one it replaces. Subscriptions made without a profile keep theirs.
    public func makeDefault(_ name: String) throws(RPCErrorObject) -> String {
        let chosen = try profile(name).profile
        return chosenDefault.name.withLock { current in
            defer { current = chosen }
            return current
        }
    }

    /// Every profile, in name order.
    public var profiles: [ProfileServices] { byName.keys.sorted().compactMap { byName[$0] } }

    /// Every profile's session driver, in name order.
    public var sessions: [SessionDriver] { profiles.map(\.session) }

    /// The profile `name` (or the default one), or the error to answer. A profile added to the
    /// configuration since the daemon started is not served until it restarts.
    public func profile(_ name: String?) throws(RPCErrorObject) -> ProfileServices {
        let wanted = name ?? defaultProfile
        guard let profile = byName[wanted] else {
            throw .application(.unknownProfile, "no profile named '\(wanted.prefix(64))'; configured: \(byName.keys.sorted().joined(separator: ", "))")
        }
        return profile
    }
}

/// The default profile's name, in one place all copies of a `ProfileRegistry` share.
final class DefaultProfileChoice: Sendable {
    let name: Mutex<String>
    init(name: consuming Mutex<String>) { self.name = name }
}
