import AuthCore

/// Tells the user outside any app when the server ended a profile's session, offering to sign
/// in again (`SignOutNotice`), and starts the sign-in they choose (`SignInStarter`). Runs beside
/// the profile's `SessionDriver`, which tells it of each sign-out (with the session that ended)
/// and of each event that has a session again; what to offer is `SignInAgainOffer`'s to decide.
///
/// A notification service can be slow, and the user may take minutes to choose: each notice
/// runs as a task of its own, withdrawn as soon as the profile signs in again some other way.
actor SignInAgainNotices {
    /// What the driver tells it, in order.
    enum Input: Sendable {
        /// The server ended the session (`DesktopNoticeRule.notifies`); `ended` as it was then.
        case sessionEnded(SignOutReason, ended: Session?)
        /// An event with a session: signed in again, so every notice on screen is moot.
        case signedIn
    }

    private let notice: any SignOutNotice
    private let starter: (any SignInStarter)?
    private let profile: String
    private let inputs: AsyncStream<Input>
    private let sink: AsyncStream<Input>.Continuation
    /// One per notice on screen, by number: finished when the profile signs in again, which
    /// withdraws them; removed when a notice ends otherwise.
    private var withdrawals: [UInt64: AsyncStream<Void>.Continuation] = [:]
    private var nextNotice: UInt64 = 0

    init(notice: any SignOutNotice, starter: (any SignInStarter)?, profile: String) {
        self.notice = notice
        self.starter = starter
        self.profile = profile
        (inputs, sink) = AsyncStream.makeStream()
    }

    /// Hands an input over without waiting: the driver's turn never waits for a notification.
    nonisolated func tell(_ input: Input) {
        sink.yield(input)
    }

    /// Ends `run` once the inputs told so far are handled.
    nonisolated func finish() {
        sink.finish()
    }

    /// Handles inputs until `finish` or cancellation; returns once every notice has ended.
    func run() async {
        await withDiscardingTaskGroup { group in
            for await input in inputs {
                switch input {
                case .signedIn:
                    for withdrawal in withdrawals.values { withdrawal.finish() }
                    withdrawals.removeAll()
                case .sessionEnded(let reason, let ended):
                    let offer = SignInAgainOffer(reason: reason, ended: ended)
                    let (signedInAgain, withdrawal) = AsyncStream<Void>.makeStream()
                    nextNotice += 1
                    let number = nextNotice
                    withdrawals[number] = withdrawal
                    let (notice, profile) = (notice, profile)
                    let starter = offer.canBeStarted ? starter : nil
                    group.addTask {
                        await Self.offerSignIn(notice, starter: starter, profile: profile, reason: reason, offer: offer, until: signedInAgain)
                        await self.noticeEnded(number)
                    }
                }
            }
            group.cancelAll()
        }
    }

    /// Forgets a notice that ended (closed, chosen, withdrawn).
    private func noticeEnded(_ number: UInt64) {
        withdrawals.removeValue(forKey: number)?.finish()
    }

    /// Shows the notice until the user chooses to sign in (then starts that sign-in), closes it,
    /// or the profile signs in again some other way (then it is withdrawn). Off the actor: the
    /// starter looks at the file system to tell whether it can start anything.
    private static func offerSignIn(_ notice: any SignOutNotice, starter: (any SignInStarter)?, profile: String, reason: SignOutReason,
                                    offer: SignInAgainOffer, until signedInAgain: AsyncStream<Void>) async {
        let starter = starter.flatMap { $0.canStart(offer.plan, inTerminal: offer.inTerminal) ? $0 : nil }
        let chosen = await withTaskGroup(of: Bool.self) { race in
            race.addTask { await notice.sessionEnded(profile: profile, reason: reason, plan: offer.plan, offersSignIn: starter != nil) }
            race.addTask {
                for await _ in signedInAgain {}
                return false
            }
            let first = await race.next() ?? false
            race.cancelAll()
            return first
        }
        // Chosen just as the daemon stops: no window that would outlive it.
        guard chosen, !Task.isCancelled, let starter else { return }
        await starter.startSignIn(profile: profile, plan: offer.plan, inTerminal: offer.inTerminal)
    }
}
