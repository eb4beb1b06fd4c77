import AuthCore
import AuthProtocol
import FoundationEssentials

/// What a sign-in page needs of the session beyond the sign-ins every method makes: who it
/// signed in, tokens that are that user's only, and the event that says how a page ended.
extension SessionDriver {
    /// The account of the session held now, when it is user `userID`'s (what a page reports once
    /// its sign-in is stored); nil when none is held or another user's is (a sign-in elsewhere
    /// replaced it since).
    func heldAccount(ofUser userID: String) -> SignInPageAccount? {
        guard let session = machine.session, session.user.id == userID else { return nil }
        return SignInPageAccount(session: session)
    }

    /// A token valid for at least `minimum` seconds of the session of user `userID`, refreshing
    /// first when needed; `notSignedIn(.replaced)` when the session held is another user's (a
    /// sign-in elsewhere replaced the page's), so that no call of the page reaches their account.
    /// Checked when this actor takes the answer back, by the user alone: a refresh of the same
    /// session in between changes the token, not whose it is.
    func token(validFor minimum: TimeInterval, ofUser userID: String) async -> Result<IssuedToken, TokenFailure> {
        let answer = await token(validFor: minimum)
        guard case .success = answer else { return answer }
        guard machine.session?.user.id == userID else { return .failure(.notSignedIn(.replaced)) }
        return answer
    }

    /// Tells the profile's subscribers that the sign-in page `flowID` ended as `end` says
    /// (`InteractiveSignInEnd`), with why it failed in `message`.
    func announceInteractiveSignInEnded(flowID: String, end: String, message: String?) {
        let status = StatusMapper.status(of: machine, profile: profile, server: server) { self.assurances.assurance(of: $0) }
        publishToSubscribers(AuthEventMessage(event: .interactiveSignInEnded, profile: profile, status: status, reason: end,
                                              flowID: flowID, message: message))
    }
}
