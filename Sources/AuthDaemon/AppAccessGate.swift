import AuthCore
import AuthProtocol
import AuthSocketServer
import FoundationEssentials
import Logging
import Synchronization

/// Applies each profile's app policy to token requests: lets them through, refuses them, or
/// holds them until the user decides (with `authctl apps allow|deny` or a notification).
/// The rules are in `AppAccessBook`; this actor adds the waiting, the remembering and the prompt.
public actor AppAccessGate {
    /// Behind a lock rather than the actor, so that `handOutAtOnce` can answer on the socket's
    /// event loop; the waiting stays in the actor.
    private nonisolated let book: Mutex<AppAccessBook>
    private nonisolated let policies: [String: AppAccessPolicy]
    private let file: AppDecisionFile?
    private let prompt: (any ApprovalPrompt)?
    private let approvalTimeout: Duration
    private nonisolated let clock: any WallClock
    private let monotonic: any MonotonicClock
    private nonisolated let deciders: Set<String>
    private let logger: Logger
    private var waits: [UUID: Wait] = [:]

    /// One token request waiting for a decision. Its continuation is registered a moment after
    /// the wait begins (in a child task), so a decision or timeout may come first.
    private enum Wait {
        case starting(AppKey)
        case waiting(AppKey, CheckedContinuation<AppDecision?, Never>)
        case ended(AppDecision?)
    }

    /// Creates a gate. `deciders` are the executables allowed to decide (authctl beside authd);
    /// decisions are remembered in `file` when given.
    public init(policies: [String: AppAccessPolicy], file: AppDecisionFile?, prompt: (any ApprovalPrompt)?,
                approvalTimeout: Duration = .seconds(120), deciders: Set<String>,
                clock: any WallClock = SystemClock(), monotonic: any MonotonicClock = SystemMonotonicClock(), logger: Logger) {
        self.clock = clock
        self.monotonic = monotonic
        self.policies = policies
        self.file = file
        self.prompt = prompt
        self.approvalTimeout = approvalTimeout
        self.deciders = deciders
        self.logger = logger
        var remembered: [AppKey: AppDecision] = [:]
        if let file {
            do { remembered = try file.load() } catch {
                logger.error("could not read the remembered app decisions; every app of a profile that asks will be asked again",
                             metadata: ["file": "\(file.path)", "error": "\(error)"])
            }
        }
        book = Mutex(AppAccessBook(decisions: remembered))
    }

    /// Whether `client` is the user's own tool: the authctl installed with this authd, not
    /// inside a sandbox. It may manage sessions and decide about apps.
    public nonisolated func isUserTool(_ client: ClientIdentity) -> Bool {
        client.isIdentified && deciders.contains(client.executable) && client.appID == nil
    }

    /// The policy of `profile`.
    public nonisolated func policy(of profile: String) -> AppAccessPolicy { policies[profile] ?? .open }

    /// Lets `client` have a token of `profile` at once when no waiting is needed (open profiles,
    /// apps already allowed), noting the request and the token handed out under one lock. False,
    /// noting nothing, when `admit` must decide (an app to ask about, or one denied).
    public nonisolated func handOutAtOnce(to client: ClientIdentity, profile: String) -> Bool {
        // An unidentified client is never noted: it has no name of its own to note it under.
        guard client.isIdentified else { return policy(of: profile) == .open }
        let key = AppKey(app: client.app, profile: profile)
        let asks = policy(of: profile) == .ask
        let now = clock.now()
        return book.withLock { $0.handOutAtOnce(key, asks: asks, executable: client.executable, appID: client.appID, at: now) }
    }

    /// Lets `client`'s token request for `profile` through, or throws why not. Under a profile
    /// that asks, an app not yet decided waits here (up to the approval timeout).
    public func admit(_ client: ClientIdentity, profile: String) async throws(RPCErrorObject) {
        guard client.isIdentified else {
            // Never merged into one approvable "unknown" app: each such client is refused on its own.
            guard policy(of: profile) == .ask else { return }
            logger.notice("refused a client authd cannot identify", metadata: ["client.why": "\(client.unidentified ?? "")", "session.profile": "\(profile)"])
            throw .application(.appDenied, "profile '\(profile)' asks before an app gets tokens, and authd cannot tell which program this is (\(client.unidentified ?? "unknown")), so it refuses it")
        }
        let key = AppKey(app: client.app, profile: profile)
        let asks = policy(of: profile) == .ask
        let verdict = book.withLock { book in
            book.noteRequest(key, executable: client.executable, appID: client.appID)
            return book.verdict(for: key, asks: asks)
        }
        switch verdict {
        case .allow:
            return
        case .deny:
            throw Self.denied(key)
        case .ask:
            let first = book.withLock { $0.startWaiting(key) }
            logger.notice("an app waits for access to a profile", metadata: ["client.app": "\(key.app)", "session.profile": "\(profile)"])
            // The first request waiting shows the question; the others wait for the same answer.
            var asking: (@Sendable () async -> AppDecision?)?
            if first, let prompt {
                let executable = client.executable
                asking = { await prompt.ask(app: key.app, executable: executable, profile: profile) }
            }
            let decision: AppDecision? = await waitForDecision(key, asking: asking)
            book.withLock { $0.stopWaiting(key) }
            switch decision {
            case .allowed?: return
            case .denied?: throw Self.denied(key)
            case nil:
                throw .application(.approvalTimeout, "profile '\(profile)' asks before an app gets tokens, and nobody allowed \(key.app) within \(approvalTimeout.components.seconds) s: run '\(Self.allowCommand(key))'")
            }
        }
    }

    /// Whether the user denied `client` the profile, now (a subscription made before the denial
    /// stops receiving events).
    public nonisolated func isDenied(_ client: ClientIdentity, profile: String) -> Bool {
        guard client.isIdentified else { return false }
        return book.withLock { $0.verdict(for: AppKey(app: client.app, profile: profile), asks: false) == .deny }
    }

    /// Notes that `client` got a token of `profile` (for `apps.list` and status).
    public nonisolated func noteTokenHandedOut(to client: ClientIdentity, profile: String) {
        guard client.isIdentified else { return }
        let now = clock.now()
        book.withLock { $0.noteTokenHandedOut(AppKey(app: client.app, profile: profile), at: now) }
    }

    /// Records a decision made by `caller` (it must be one of the deciders), remembers it and
    /// answers the requests waiting for it.
    public func decide(app: String, profile: String, decision: AppDecision, caller: ClientIdentity) throws(RPCErrorObject) -> AppRecord {
        guard isUserTool(caller) else {
            logger.warning("refused an app decision from a process that is not authctl", metadata: ["client.app": "\(caller)"])
            throw .application(.accessDenied, "only authctl can allow or deny apps: run 'authctl apps \(decision == .allowed ? "allow" : "deny") \(app)'")
        }
        let key = AppKey(app: app, profile: profile)
        decide(key, decision)
        return record(for: key) ?? AppRecord(app: app, executable: app, appID: nil, profile: profile, access: decision.rawValue, requests: 0, lastUsed: nil)
    }

    /// How many token requests of `app` for `profile` wait for a decision now.
    public func waitingRequests(app: String, profile: String) -> Int {
        book.withLock { $0.waitingRequests(AppKey(app: app, profile: profile)) }
    }

    /// Every app seen or decided, for `profile` or for all.
    public func records(profile: String?) -> [AppRecord] {
        book.withLock { $0.entries { self.policy(of: $0) == .ask } }
            .filter { profile == nil || $0.key.profile == profile }
            .map { Self.record($0.key, $0.usage, $0.access) }
    }

    private func record(for key: AppKey) -> AppRecord? {
        records(profile: key.profile).first { $0.app == key.app }
    }

    private static func record(_ key: AppKey, _ usage: AppAccessBook.Usage?, _ access: String) -> AppRecord {
        AppRecord(app: key.app, executable: usage?.executable ?? key.app, appID: usage?.appID, profile: key.profile, access: access,
                  requests: usage?.requests ?? 0, lastUsed: usage?.lastUsed.map { Int64($0.timeIntervalSince1970.rounded(.down)) })
    }

    private func decide(_ key: AppKey, _ decision: AppDecision) {
        let (changed, decisions) = book.withLock { book in (book.decide(key, decision), book.decisions) }
        if changed {
            logger.notice("app decision", metadata: ["client.app": "\(key.app)", "session.profile": "\(key.profile)", "decision": "\(decision.rawValue)"])
            if let file {
                do { try file.save(decisions) } catch {
                    logger.error("could not remember an app decision; it holds until authd stops", metadata: ["file": "\(file.path)", "error": "\(error)"])
                }
            }
        }
        for (id, wait) in waits {
            switch wait {
            case .starting(let waitingFor) where waitingFor == key:
                waits[id] = .ended(decision)
            case .waiting(let waitingFor, let continuation) where waitingFor == key:
                waits[id] = .ended(decision)
                continuation.resume(returning: decision)
            default:
                break
            }
        }
    }

    /// What ends a child of a wait.
    private enum WaitEnd: Sendable {
        case decided(AppDecision?)
        case promptClosed
    }

    /// Waits for a decision on `key`, or nil after the approval timeout; `asking` shows the
    /// question meanwhile, and its answer counts like one from authctl.
    private func waitForDecision(_ key: AppKey, asking: (@Sendable () async -> AppDecision?)?) async -> AppDecision? {
        let id = UUID()
        waits[id] = .starting(key)
        defer { waits[id] = nil }
        let timeout = Double(approvalTimeout.components.seconds) + Double(approvalTimeout.components.attoseconds) / 1e18
        let monotonic = self.monotonic
        return await withTaskGroup(of: WaitEnd.self) { group in
            group.addTask { .decided(await self.register(id)) }
            group.addTask {
                try? await monotonic.sleep(for: timeout)
                await self.end(id)
                return .decided(nil)
            }
            if let asking {
                group.addTask {
                    if let answer = await asking(), !Task.isCancelled { await self.decide(key, answer) }
                    return .promptClosed
                }
            }
            var result: AppDecision?
            while let ended = await group.next() {
                if case .decided(let decision) = ended {
                    result = decision
                    break
                }
            }
            group.cancelAll()
            end(id)
            return result
        }
    }

    private func register(_ id: UUID) async -> AppDecision? {
        await withCheckedContinuation { continuation in
            switch waits[id] {
            case .starting(let key)?: waits[id] = .waiting(key, continuation)
            case .ended(let decision)?: continuation.resume(returning: decision)
            case .waiting?, nil: continuation.resume(returning: nil)
            }
        }
    }

    /// Ends wait `id` without a decision, unless it has ended already.
    private func end(_ id: UUID) {
        switch waits[id] {
        case .starting?: waits[id] = .ended(nil)
        case .waiting(_, let continuation)?:
            waits[id] = .ended(nil)
            continuation.resume(returning: nil)
        case .ended?, nil: break
        }
    }

    private static func denied(_ key: AppKey) -> RPCErrorObject {
        .application(.appDenied, "\(key.app) was denied access to profile '\(key.profile)'; to change that, run '\(allowCommand(key))'")
    }

    /// The command that allows `key`. It always names the profile: a profile called "default"
    /// need not be the daemon's default one, which is what leaving the option out would mean.
    private static func allowCommand(_ key: AppKey) -> String {
        "authctl apps allow \(key.app) --profile \(key.profile)"
    }
}
