import ArgumentParser
import AuthConfig
import AuthCore
import AuthDaemon
import AuthProtocol
import AuthSocketServer
import FoundationEssentials
import FoundationGaps
import GoTrue
import Keyring
import Logging
import NIOCore
import ServiceLifecycle
import SignInPageServer
import SystemIntegration
#if canImport(Glibc)
import Glibc
#endif

/// `authd`: the per-user session daemon. Composition root: reads configuration, picks the real
/// keyring, HTTP client and logging, and runs the socket server and one driver per profile.
struct AuthdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "authd",
        abstract: "Keep Supabase sessions for desktop apps and hand them bearer tokens over a Unix socket.",
        discussion: """
        Profiles come from $XDG_CONFIG_HOME/authd/config.toml; --url and --anon-key (or AUTHD_URL and \
        AUTHD_ANON_KEY) define or override the profile named by --profile. Sessions are kept in the \
        Secret Service keyring. Exit codes: 0 stopped normally, 1 failed, 64 bad usage, \
        75 another authd already runs on the socket, 78 configuration error.
        """,
        version: AuthdVersion.string)

    @Option(help: "Configuration file (default: $XDG_CONFIG_HOME/authd/config.toml).")
    var config: String?

    @Option(help: "Socket path (default: $AUTHD_SOCKET or $XDG_RUNTIME_DIR/authd/authd.sock).")
    var socket: String?

    @Option(help: "Supabase project URL for the profile named by --profile (or AUTHD_URL).")
    var url: String?

    @Option(name: .customLong("anon-key"), help: "The project's anon/publishable key (or AUTHD_ANON_KEY).")
    var anonKey: String?

    @Option(help: "The profile --url and --anon-key apply to; also the default profile when given.")
    var profile: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Option(name: .customLong("refresh-lead"), help: "Refresh this many seconds before expiry (default: refresh_lead in the configuration, else max(60 s, 10 % of the lifetime); at most half the lifetime).")
    var refreshLead: Double?

    @Option(name: .customLong("max-connections"), help: "Clients served at once; one more gets a 'busy' error (default: 4096).")
    var maxConnections: Int = ConnectionLimits().maxConnections

    @Option(name: .customLong("idle-timeout"), help: "Close a connection that sends nothing for this many seconds, unless it is subscribed to events or waiting for an answer; 0 never closes (default: 60).")
    var idleTimeout: Int = 60

    @Option(help: "Which apps get the tokens of the profile named by --profile: open (every app of the user, the default) or ask (apps the user allowed with 'authctl apps allow').")
    var access: AppAccessPolicy?

    @Option(name: .customLong("approval-timeout"), help: "Seconds a token request of an app not yet allowed waits for a decision under access = ask (default: 120).")
    var approvalTimeout: Int = 120

    func run() async throws {
        // One event loop for the socket, before anything uses NIO's shared group: one user's
        // clients are served by short answers on the loop, and a second loop would only make the
        // two loops and the clients preempt each other on small machines (benchmark P3 measures
        // 32 clients: more requests per second and a lower p99 with one loop).
        NIOSingletons.groupLoopCountSuggestion = 1
        // Every number is range-checked here, where it enters: nothing later converts or
        // multiplies it in a way that could trap.
        guard (1...86_400).contains(approvalTimeout) else { throw ValidationError("--approval-timeout must be from 1 to 86400 seconds") }
        guard (1...1_000_000).contains(maxConnections) else { throw ValidationError("--max-connections must be from 1 to 1000000") }
        guard (0...604_800).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be 0 (never) or up to 604800 seconds") }
        if let refreshLead, !RefreshLead.allowed.contains(refreshLead) {
            throw ValidationError("--refresh-lead must be from 1 to \(Int(RefreshLead.allowed.upperBound)) seconds")
        }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
        // Under systemd, lines carry the journal's priority prefix; by hand, plain timestamped lines.
        let toJournal = JournalLogHandler.stderrIsJournal()
        LoggingSystem.bootstrap { label in
            if toJournal { return JournalLogHandler(label: label, level: level) }
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return EscapingLogHandler(wrapping: handler)
        }
        let logger = Logger(label: "authd")
        ProcessHardening.protectMemory(logger: logger)
        raiseDescriptorLimit()

        let environment = ProcessInfo.processInfo.environment
        let configuration: DaemonConfiguration
        let socketPath: String
        let activated: SocketActivation.Inherited?
        do {
            configuration = try loadConfiguration(environment: environment)
            activated = try SocketActivation.take()
            // A socket systemd passed wins: it is where clients were told to connect.
            socketPath = try activated?.path ?? socket ?? SocketPath.resolve(environment: environment)
        } catch {
            StandardStreams.writeError("authd: \(error.readableDescription)\n")
            throw ExitCode(78)
        }
        // The keyring's D-Bus handshake and key exchange are most of a cold start's wait (benchmark
        // P6): they start now, on the keyring's thread, and overlap the rest of start-up. Not
        // earlier: taking the inherited socket unsets systemd's variables, and GLib reads the
        // environment on that thread.
        let store = LibsecretStore()
        store.connectAhead()

        var policy = RefreshPolicy()
        policy.fixedLead = refreshLead ?? configuration.refreshLead
        // The sign-in pages: a server on 127.0.0.1 per page, opened in the user's browser by the
        // desktop portal, else from here (with the environment taken after socket activation's
        // variables were unset, so that no child sees them).
        let browserOpener = DesktopBrowserOpener(logger: logger)
        let pageServers = LoopbackSignInPageListening()
        let starters = configuration.profiles.map { _ in
            SignInAgainStarter(browserSignIn: AuthctlSignInStarter(logger: logger), opener: browserOpener)
        }
        let drivers = zip(configuration.profiles, starters).map { profile, starter in
            SessionDriver(profile: profile.name, server: profile.url.absoluteString, store: store,
                          api: GoTrueClient(projectURL: profile.url, anonKey: profile.anonKey, clientInfo: "authd/\(AuthdVersion.string)"),
                          notice: configuration.signInNotices ? DesktopSignOutNotice(logger: logger) : nil,
                          signInStarter: starter, policy: policy, logger: logger)
        }
        let profiles = zip(drivers, starters).map { driver, starter in
            ProfileServices(session: driver, pages: pageServers, browserOpener: browserOpener, signInAgain: starter)
        }
        let registry = ProfileRegistry(profiles: profiles, defaultProfile: configuration.defaultProfile)
        let apps = AppAccessGate(policies: Dictionary(uniqueKeysWithValues: configuration.profiles.map { ($0.name, $0.access) }),
                                 file: AppDecisionFile(path: AppDecisionFile.defaultPath(environment: environment)),
                                 prompt: DesktopNotificationPrompt(logger: logger), approvalTimeout: .seconds(approvalTimeout),
                                 deciders: Self.authctlInstalledWithUs(), logger: logger)
        let (listening, listeningSink) = AsyncStream.makeStream(of: Void.self)
        let limits = ConnectionLimits(maxConnections: maxConnections, idleTimeout: idleTimeout == 0 ? nil : .seconds(idleTimeout))
        let dispatcher = RequestDispatcher(registry: registry, apps: apps, logger: logger)
        let server = UnixSocketServer(path: socketPath, handler: dispatcher, logger: logger,
                                      limits: limits, inheritedDescriptor: activated?.descriptor) {
            listeningSink.yield()
            listeningSink.finish()
        }
        let supervisor = ServiceSupervisor(drivers: drivers, notifier: SystemdNotifier(), listening: listening, logger: logger)

        let wakeSignals = WakeSignalRelay(sources: [ResumeMonitor(logger: logger), NetworkChangeMonitor(logger: logger)], drivers: drivers)

        // Services stop in reverse order: the supervisor first (STOPPING=1 at once), then the socket
        // (no new requests), then the drivers.
        let group = ServiceGroup(configuration: .init(
            services: profiles.map { .init(service: $0) } + [.init(service: wakeSignals), .init(service: server), .init(service: supervisor)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        logger.info("starting", metadata: ["authd.version": "\(AuthdVersion.string)", "authd.profiles": "\(drivers.map(\.profile).joined(separator: ","))"])
        PeerPidfdSupport.logAtStart(logger)
        do {
            try await group.run()
        } catch let error as SocketSetupError {
            StandardStreams.writeError("authd: \(error.readableDescription)\n")
            throw ExitCode(error.alreadyRunning ? 75 : 1)
        } catch {
            logger.critical("stopped on an error", metadata: ["error": "\(error)"])
            throw ExitCode.failure
        }
        logger.info("stopped")
    }

    /// The configuration file (if any) with --url/--anon-key (or AUTHD_URL/AUTHD_ANON_KEY) applied on top.
    private func loadConfiguration(environment: [String: String]) throws -> DaemonConfiguration {
        let path = config ?? DaemonConfiguration.defaultPath(environment: environment)
        var configuration = DaemonConfiguration(profiles: [], defaultProfile: profile ?? "default")
        if FileManager.default.fileExists(atPath: path) {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            configuration = try DaemonConfiguration.parse(text, source: path)
        } else if config != nil {
            throw ConfigurationError("\(path): no such file")
        }
        let overrideURL = url ?? environment["AUTHD_URL"].flatMap { $0.isEmpty ? nil : $0 }
        let overrideKey = anonKey ?? environment["AUTHD_ANON_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        if overrideURL != nil || overrideKey != nil {
            let name = profile ?? configuration.defaultProfile
            let existing = configuration.profiles.first { $0.name == name }
            guard let urlText = overrideURL ?? existing?.url.absoluteString, let key = overrideKey ?? existing?.anonKey else {
                throw ConfigurationError("profile '\(name)' needs both a URL and an anon key (--url and --anon-key)")
            }
            let updated = try ProfileConfiguration(name: name, url: urlText, anonKey: key, source: "command line")
            configuration.profiles.removeAll { $0.name == name }
            configuration.profiles.append(updated)
            configuration.defaultProfile = name
        }
        if let profile, configuration.profiles.contains(where: { $0.name == profile }) {
            configuration.defaultProfile = profile
        }
        if let access {
            let name = profile ?? configuration.defaultProfile
            guard let index = configuration.profiles.firstIndex(where: { $0.name == name }) else {
                throw ConfigurationError("--access applies to profile '\(name)', which is not configured")
            }
            configuration.profiles[index].access = access
        }
        guard !configuration.profiles.isEmpty else {
            throw ConfigurationError("""
                no profile configured. Create \(path) with
                  [profiles.default]
                  url = "https://<ref>.supabase.co"
                  anon_key = "<the project's anon key>"
                or pass --url and --anon-key
                """)
        }
        return configuration
    }

    /// The authctl installed with this authd: the only program whose app decisions count. That
    /// is this very executable, which authctl's front starts as `authctl` for `authctl apps`.
    private static func authctlInstalledWithUs() -> Set<String> {
        guard let us = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return [] }
        return [us]
    }

    /// Every client connection is a descriptor; systemd's default soft limit (1024) would cap the
    /// daemon near a thousand clients. NIO uses epoll, not select, so the hard limit is safe.
    private func raiseDescriptorLimit() {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
}

extension AppAccessPolicy: ExpressibleByArgument {}
