import AuthCore
import FoundationGaps
import Logging

extension AccountOperations {
    /// Takes over the session an app held until now (`session.signInWithRefreshToken`):
    /// exchanges its refresh token (`grant_type=refresh_token`), adopts the new session, announced
    /// as `SIGNED_IN`, and has it refreshed once more at once, so that the app's copy is no longer
    /// the immediate parent of the current token (`SessionTakeOver` says why). A refused token
    /// changes nothing here.
    ///
    /// Succeeds once the session is held, even when the second refresh failed transiently: the
    /// session is kept and served, the machine retries that refresh, and the status answered then
    /// shows the trouble (`degraded`), which is how the caller learns that the app's copy still
    /// reaches the session for now. Fails when the server ended the session before that refresh
    /// (the app, still running, may have used its copy meanwhile), and as `replaced(.stopping)`
    /// when authd stopped before adopting the session (the app's token is then the parent of the
    /// lost one, which GoTrue answers, so asking again works). Succeeds when authd stopped while
    /// the second refresh was out: the session is stored and the next authd goes on with it, and
    /// the app's copy, perhaps spent already, must not be presented again, as after any success.
    public func takeOver(refreshToken: String) async -> Result<Void, SignInFailure> {
        let credential = SignInCredential.refreshToken(refreshToken)
        let grant: SessionGrant
        do {
            grant = try await api.signIn(credential, captchaToken: nil)
        } catch where error.leavesOutcomeUnknown {
            // The server may have rotated the token and the answer was lost: the token is then
            // the immediate parent of the session's current one, which GoTrue always accepts
            // once more, answering with that current token. Without this retry the user would
            // hold a spent token and have to sign in again.
            logger.info("no clear answer to the session take-over; trying once more", metadata: ["error": "\(error.readableDescription)"])
            do { grant = try await api.signIn(credential, captchaToken: nil) } catch {
                logger.info("session take-over refused", metadata: ["error": "\(error.readableDescription)"])
                return .failure(.server(error))
            }
        } catch {
            logger.info("session take-over refused", metadata: ["error": "\(error.readableDescription)"])
            return .failure(.server(error))
        }
        let outcome: SessionTakeOver.Outcome
        switch await session.adoptTakenOver(grant) {
        case .failure(let failure): return .failure(.replaced(failure))
        case .success(let result): outcome = result
        }
        switch outcome {
        case .complete:
            logger.info("session taken over; the app's copy of its refresh token no longer leads to it")
            return .success(())
        case .pending(let retry?):
            logger.notice("session taken over, but not yet refreshed again: the app's copy of its refresh token still leads to it until a refresh succeeds",
                          metadata: ["refresh.detail": "\(retry.detail)"])
            return .success(())
        case .pending(nil):
            logger.notice("session taken over; refreshes are held back, so the app's copy of its refresh token leads to it until the next refresh")
            return .success(())
        case .ended(let reason):
            logger.warning("the server ended the session just after the take-over", metadata: ["error.code": "\(reason.code)"])
            return .failure(.replaced(.notSignedIn(reason)))
        case .overtaken:
            logger.info("take-over overtaken by another sign-in or a sign-out")
            return .failure(.replaced(.notSignedIn(.replaced)))
        case .interrupted:
            logger.notice("session taken over and stored; authd stopped before refreshing it once more, so the app's copy of its refresh token may still lead to it until the next authd refreshes it")
            return .success(())
        }
    }
}
