import AuthCore
import AuthProtocol
import FoundationEssentials
import Logging
import ServiceLifecycle
import SignInPage
import SignInPageDriver
import Synchronization

/// One profile's sign-in pages (`session.beginInteractiveSignIn`): each a visit of authd's page
/// (`SignInPageVisit`) on a server of its own (the `SignInPageListening` port), opened in the
/// user's browser (the `BrowserOpener` port), and the apps waiting for how it ends. Holds no
/// rule: `SignInPageBook` decides how many pages, who waits for what and how long an ended page
/// is served; the flow behind each page decides everything on it.
///
/// Every page runs as a child task of `run()`: its server, the reading of the project's
/// settings, its expiry and its closing, so that a daemon that stops closes every page.
public actor InteractiveSignIns: Service {
    /// What `begin` answers.
    public struct Begun: Sendable, Equatable {
        /// Names the page.
        public var flowID: String
        /// Opens the page, once.
        public var url: String
        /// Whether the user's browser was started on `url`.
        public var browserOpened: Bool
    }

    /// Why a page could not be opened.
    public enum Failure: Error, Sendable, Equatable {
        /// This authd serves no pages, or the server could not start (why).
        case unavailable(String)
        /// The profile's pages are all under way already.
        case tooMany(Int)
    }

    /// How a wait for a page ended.
    public enum Outcome: Sendable, Equatable {
        /// The page's first end.
        case ended(SignInPageEnd)
        /// No such page is open, nor ended lately.
        case unknown
        /// authd stops: the page closed before it ended.
        case stopped
    }

    /// A page: what `run()` receives from `begin` to serve, and what ends it early.
    private struct Page: Sendable {
        var flowID: String
        var visit: SignInPageVisit
        var listener: any SignInPageListener
        var operations: SignInPageSessionOperations
        /// Finished to close the page before its time after its end is up (a newer page of its app).
        var closing: AsyncStream<Void>
        var closeEarly: AsyncStream<Void>.Continuation
    }

    private let profile: String
    private let project: SignInPageView.Project
    private let accounts: AccountOperations
    private let browser: BrowserSignIns
    private let listening: (any SignInPageListening)?
    private let opener: (any BrowserOpener)?
    private let monotonic: any MonotonicClock
    private let logger: Logger
    private var book = SignInPageBook()
    private var pages: [String: Page] = [:]
    /// The requests waiting for a page's first end. Behind a lock rather than the actor, so that a
    /// cancelled request is answered at once from its cancellation handler.
    private nonisolated let waiters = Mutex(FlowWaiters<Outcome>())
    private let opened: AsyncStream<Page>
    private let openedSink: AsyncStream<Page>.Continuation

    /// The pages of the profile `accounts` and `browser` serve, for `project`, served through
    /// `listening` (none: `begin` says this authd serves no page) and opened with `opener`.
    public init(project: SignInPageView.Project, accounts: AccountOperations, browser: BrowserSignIns,
                listening: (any SignInPageListening)?, opener: (any BrowserOpener)?) {
        profile = accounts.session.profile
        self.project = project
        self.accounts = accounts
        self.browser = browser
        self.listening = listening
        self.opener = opener
        monotonic = accounts.session.monotonic
        logger = accounts.logger
        (opened, openedSink) = AsyncStream.makeStream()
    }

    /// Runs every page until cancelled or a graceful shutdown; then closes them all and tells
    /// their waiters.
    public func run() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for await page in self.opened {
                    group.addTask { await self.serve(page) }
                }
            }
        }
        // No page opens from now on (`begin` says authd stops), and each one still waited for is told.
        openedSink.finish()
        for waiter in waiters.withLock({ $0.takeAll() }) { waiter.resume(returning: .stopped) }
    }

    /// Opens a page for `owner` (the app asking) with `options`, and starts the user's browser
    /// on it when `openBrowser`. The page is served from now until its end, and `lingering` after.
    public func begin(_ options: SignInPageFlow.Options, owner: String, openBrowser: Bool) async -> Result<Begun, Failure> {
        guard let listening else { return .failure(.unavailable("this authd serves no sign-in page")) }
        let listener: any SignInPageListener
        do { listener = try await listening.listen() } catch {
            logger.warning("the sign-in page's server could not start", metadata: ["error": "\(error)"])
            return .failure(.unavailable("the sign-in page's server could not start on 127.0.0.1: \(error)"))
        }
        let flowID = PKCE.makeFlowID()
        let opening: SignInPageBook.Opening
        switch book.open(flowID, owner: owner) {
        case .success(let made): opening = made
        case .failure(.tooMany(let limit)):
            listener.close()
            return .failure(.tooMany(limit))
        }
        // The app has moved on: its oldest page under way is cancelled, and its pages still shown
        // after their end close, all at once rather than after their time.
        for flow in opening.displaced { _ = await pages[flow]?.visit.cancel() }
        for flow in opening.displaced + opening.closing { closeEarly(flow) }
        let operations = SignInPageSessionOperations(accounts: accounts, browser: browser, app: owner)
        let visit = SignInPageVisit(port: listener.port, project: project, options: options, clock: accounts.session.clock,
                                    operations: operations)
        let (closing, closeEarly) = AsyncStream<Void>.makeStream()
        let page = Page(flowID: flowID, visit: visit, listener: listener, operations: operations, closing: closing, closeEarly: closeEarly)
        if case .terminated = openedSink.yield(page) {
            // `run()` has ended: authd stops, and nobody would serve or close the page.
            listener.close()
            book.close(flowID)
            return .failure(.unavailable("authd is stopping"))
        }
        pages[flowID] = page
        let browserOpened = openBrowser ? await opener?.open(visit.openURL) ?? false : false
        logger.info("sign-in page opened", metadata: ["sign_in_page.flow": "\(flowID)", "sign_in_page.port": "\(listener.port)",
                                                      "client.app": "\(owner)", "browser.opened": "\(browserOpened)"])
        return .success(Begun(flowID: flowID, url: visit.openURL, browserOpened: browserOpened))
    }

    /// Waits for page `flowID`'s first end; answers at once when it has ended already. A
    /// cancelled wait (its client went away) is answered as `stopped`.
    public func wait(for flowID: String) async -> Outcome {
        if let end = book.firstEnd(of: flowID) { return .ended(end) }
        guard book.isOpen(flowID) else { return .unknown }
        let id = waiters.withLock { $0.register(flowID) }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if waiters.withLock({ $0.attach(continuation, to: id) }) { continuation.resume(returning: .stopped) }
            }
        } onCancel: {
            self.waiters.withLock { $0.cancel(id) }?.resume(returning: .stopped)
        }
    }

    /// Cancels page `flowID` as its "Cancel" does, for `owner`, the app that opened it (no
    /// other app ends a sign-in the user is in the middle of); false when it is not under way.
    public func cancel(_ flowID: String, owner: String) async -> Bool {
        guard book.underWay.contains(flowID), book.owner(of: flowID) == owner, let page = pages[flowID] else { return false }
        return await page.visit.cancel()
    }

    /// One page, from its first request to its server's close: serves it, reads the settings,
    /// ends it when its time is up, and closes it `lingering` after its last end (at once when
    /// its app has moved on).
    private func serve(_ page: Page) async {
        let (visit, listener, monotonic) = (page.visit, page.listener, monotonic)
        await withDiscardingTaskGroup { group in
            group.addTask {
                do { try await listener.serve { request in await visit.answer(request) } } catch is CancellationError {
                    // Closed by its end or authd's stop: nothing went wrong.
                } catch {
                    // Nobody can reach the page any more: it ends, rather than wait its time out.
                    self.logger.notice("the sign-in page's server stopped", metadata: ["sign_in_page.flow": "\(page.flowID)", "error": "\(error)"])
                    _ = await visit.cancel()
                }
            }
            group.addTask { await visit.start() }
            group.addTask {
                // Due when the flow says ("Start again" gives a new flow a new time); an operation
                // still out is waited for, a second at a time.
                while true {
                    let due = await visit.expiresAt.timeIntervalSince(self.accounts.session.clock.now())
                    guard (try? await monotonic.sleep(for: max(1, due))) != nil, await !visit.expireIfDue() else { return }
                }
            }
            for await end in visit.ends {
                await ended(page.flowID, end)
            }
            visitEnded(page.flowID)
            // The last end: the final page is still served for a while, then the server closes.
            await withTaskGroup(of: Void.self) { linger in
                linger.addTask { try? await monotonic.sleep(for: SignInPageBook.lingering) }
                linger.addTask { for await _ in page.closing {} }
                await linger.next()
                linger.cancelAll()
            }
            listener.close()
            group.cancelAll()
        }
        await close(page.flowID)
    }

    /// Page `flowID` is to close now, not `lingering` after its end: its port closes at once.
    private func closeEarly(_ flowID: String) {
        guard let page = pages[flowID] else { return }
        page.listener.close()
        page.closeEarly.finish()
    }

    /// Page `flowID`'s visit is over; it is only shown until it closes.
    private func visitEnded(_ flowID: String) {
        book.visitEnded(flowID)
    }

    /// Records an end of page `flowID`, tells the profile's subscribers, and answers the page's
    /// waiters with its first end.
    private func ended(_ flowID: String, _ end: SignInPageEnd) async {
        let first = book.ended(flowID, end)
        let (name, message) = wire(end)
        logger.info("sign-in page ended", metadata: ["sign_in_page.flow": "\(flowID)", "sign_in_page.end": "\(name)"])
        await accounts.session.announceInteractiveSignInEnded(flowID: flowID, end: name, message: message)
        guard first else { return }
        for waiter in waiters.withLock({ $0.take(flowID) }) { waiter.resume(returning: .ended(end)) }
    }

    /// Forgets a page whose server has closed, with the browser flow it started; anyone still
    /// waiting for it learns it stopped.
    private func close(_ flowID: String) async {
        book.close(flowID)
        await pages.removeValue(forKey: flowID)?.operations.close()
        logger.debug("sign-in page closed", metadata: ["sign_in_page.flow": "\(flowID)"])
        for waiter in waiters.withLock({ $0.take(flowID) }) { waiter.resume(returning: .stopped) }
    }

    /// `end` as `INTERACTIVE_SIGN_IN_ENDED` names it, with why it failed in words.
    private func wire(_ end: SignInPageEnd) -> (name: String, message: String?) {
        switch end {
        case .signedIn: return (InteractiveSignInEnd.signedIn, nil)
        case .cancelled: return (InteractiveSignInEnd.cancelled, nil)
        case .expired: return (InteractiveSignInEnd.expired, nil)
        case .failed(let error): return (InteractiveSignInEnd.failed, error.message(now: accounts.session.clock.now()))
        }
    }
}
