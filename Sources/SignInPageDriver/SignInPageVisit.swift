import AuthCore
import FoundationEssentials
import SignInPage
import SignInPageBridge

/// One visit of authd's sign-in page: its gate, its flow and the page's own knowledge, driven by
/// the requests the page's server reads. It holds no rule of its own: the gate decides who gets
/// an answer, the flow what a form does, the presenter and the renderer what the page shows.
/// What it does is the I/O between them: the clock, the operations (`SignInPageOperations`), and
/// the HTTP answers.
///
/// A form's answer waits for the operation it started, then sends the browser to the page again
/// (303), which shows where the flow went; meanwhile another request (a second tab, a reload)
/// sees the waiting page. The one exception is a provider's or SSO's form, answered with the
/// page that moves on to the provider: a redirect there would be stopped by `form-action 'self'`.
public actor SignInPageVisit {
    private var gate: SignInPageGate
    private var flow: SignInPageFlow
    private let options: SignInPageFlow.Options
    private let project: SignInPageView.Project
    private let clock: any WallClock
    private let operations: any SignInPageOperations
    /// The kernel's randomness (getrandom), for the gate's secrets and page tokens.
    private var random = SystemRandomNumberGenerator()
    private let ending: AsyncStream<SignInPageEnd>.Continuation
    private var endSaid = false
    /// An app cancelled the page while an operation was out: it ends once that outcome is in.
    private var cancelWhenIdle = false
    /// Whether the visit is over: its last end was said, and no new sign-in starts on it.
    private var isOver = false

    /// The URL to open in the user's browser: good once.
    public nonisolated let openURL: String
    /// The URL a provider or SSO sends the browser back to.
    public nonisolated let returnURL: String
    /// How each sign-in of the visit ended, once each: signed in, failed, cancelled or expired.
    /// A failed one may be followed by another ("Start again" on its page); the stream finishes
    /// after any other end, which is the visit's, and the owner then closes the page's server.
    public nonisolated let ends: AsyncStream<SignInPageEnd>

    /// A visit of a page served at `port`, for `project`, opened with `options`.
    public init(port: UInt16, project: SignInPageView.Project, options: SignInPageFlow.Options, clock: any WallClock,
                operations: any SignInPageOperations) {
        var random = SystemRandomNumberGenerator()
        let gate = SignInPageGate(port: port, using: &random)
        self.gate = gate
        openURL = gate.openURL
        returnURL = gate.returnURL
        (ends, ending) = AsyncStream<SignInPageEnd>.makeStream()
        flow = SignInPageFlow(startedAt: clock.now(), options: options)
        self.options = options
        self.project = project
        self.clock = clock
        self.operations = operations
    }

    /// Reads the project's settings, so that the first page shows what the project offers.
    public func start() async {
        await run(flow.start(now: clock.now()), returned: nil)
    }

    /// When the visit expires unless it has ended: the owner calls `expireIfDue()` then.
    public var expiresAt: Date { flow.expiresAt }

    /// Ends the visit if it has outlived its time (with no operation out), and says so; a
    /// failed sign-in left on its page ends the visit at that time too. True once the visit is over.
    @discardableResult
    public func expireIfDue() -> Bool {
        flow.expireIfDue(now: clock.now())
        sayIfEnded()
        if !isOver, endSaid, clock.now() >= flow.expiresAt { endVisit() }
        return isOver
    }

    /// Ends the page as its "Cancel" does, for an app that no longer wants the sign-in; true
    /// when it was still under way. An operation already out is waited for (its outcome may be a
    /// session taken, which stays), and nothing is handed out after it.
    public func cancel() -> Bool {
        guard !isOver else { return false }
        if flow.hasEnded {
            // A failed sign-in waiting for "Start again": the visit ends here, cancelled.
            ending.yield(.cancelled(signedInAs: nil))
            endVisit()
            return true
        }
        if flow.isBusy {
            cancelWhenIdle = true
        } else {
            _ = flow.handle(.cancel, now: clock.now())
            sayIfEnded()
        }
        return true
    }

    /// The answer to `request`.
    public func answer(_ request: SignInPageHTTPRequest) async -> SignInPageHTTPResponse {
        switch gate.admit(request, using: &random) {
        case .respond(let response):
            return response
        case .showPage(let token):
            return page(csrfToken: token)
        case .returned(let query):
            await run(flow.browserReturned(now: clock.now()), returned: query)
            // The browser came from another site, so it sent no cookie: a page of this server
            // that moves on to the page itself, where it does.
            return .page(SignInPageRenderer.render(SignInPageView(project: project, step: .leaving(to: gate.origin + gate.pagePath,
                                                                                                     name: "your sign-in"), csrfToken: "")))
        case .submitted(let path, let form):
            switch SignInPageFormReader.meaning(path: path, form: form, step: flow.step, actions: gate.actions) {
            case .action(let action):
                await run(flow.handle(action, now: clock.now()), returned: nil)
            case .startAgain where !isOver:
                flow = SignInPageFlow(startedAt: clock.now(), options: options)
                endSaid = false
                await start()
            case .startAgain, .nothing:
                break
            }
            if case .atProvider = flow.step, !flow.isBusy {
                return page(csrfToken: gate.issuePageToken(using: &random))
            }
            return .seeOther(gate.pagePath)
        }
    }

    /// The page as the flow stands now, its forms carrying `csrfToken`.
    private func page(csrfToken: String) -> SignInPageHTTPResponse {
        let screen = flow.view(now: clock.now())
        let view = SignInPagePresenter.view(of: screen, on: SignInPagePresenter.Page(project: project, csrfToken: csrfToken, actions: gate.actions))
        return .page(SignInPageRenderer.render(view))
    }

    /// Carries out the operations `transition` hands out, one after another, until the flow
    /// hands out none; then, if the flow has ended, says so once.
    private func run(_ transition: SignInPageTransition, returned: SignInPageForm?) async {
        var next = transition
        var query = returned
        while case .next(let request?) = next {
            // Cancelled meanwhile: what the flow hands out next is not carried out.
            let outcome = cancelWhenIdle ? .failed(.interrupted)
                : await operations.perform(request.operation, returnURL: gate.returnURL, returned: query)
            query = nil
            next = flow.complete(request.ticket, with: outcome, now: clock.now())
        }
        if cancelWhenIdle {
            cancelWhenIdle = false
            if flow.hasEnded {
                // The operation out ended the flow as it was being cancelled: its end is said,
                // and, a failure letting the user start again, the visit still ends here.
                sayIfEnded()
                if !isOver {
                    ending.yield(.cancelled(signedInAs: nil))
                    endVisit()
                }
                return
            }
            _ = flow.handle(.cancel, now: clock.now())
        }
        sayIfEnded()
    }

    /// Says once how the flow ended, when it has; an end but a failure ends the visit.
    private func sayIfEnded() {
        guard !endSaid, case .finished(let end) = flow.view(now: clock.now()).step else { return }
        endSaid = true
        ending.yield(end)
        if case .failed = end { return }
        endVisit()
    }

    /// The visit is over: `ends` finishes, and no new sign-in starts on it.
    private func endVisit() {
        isOver = true
        ending.finish()
    }
}
