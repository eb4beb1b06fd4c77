import AuthCore
import FoundationEssentials

/// The driver once its job loop has ended (authd stopping): nothing carries out the machine's
/// actions any more, so no request may wait for them, and a session the server granted in the
/// meantime is written to the keyring here, for the next authd to serve.
extension SessionDriver {
    /// Lets every waiter go once the job loop has ended: requests fail as `stopping`, and those
    /// waiting for the store read, the machine to settle or an MFA verification go on (and find
    /// the driver stopped).
    func stopServing() {
        stopped = true
        let pending = answers.values
        answers.removeAll()
        for answer in pending { answer.resume(returning: .failure(.stopping)) }
        let waiters = loadWaiters + settleWaiters + elevationWaiters
        loadWaiters.removeAll()
        settleWaiters.removeAll()
        elevationWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Writes `session`, granted by the server after the driver stopped (a sign-in, take-over or
    /// MFA verification that was out as authd stopped), straight to the keyring: the server has
    /// moved on to it, so dropping it would lose the session. Nothing else writes the keyring
    /// once the loop has ended. Whether it was stored.
    func keepGrantedAfterStop(_ session: Session) async -> Bool {
        do {
            try await store.save(session, profile: profile)
            logger.notice("stored a session the server granted as authd stopped", metadata: ["user.id": "\(session.user.id)"])
            return true
        } catch {
            logger.error("cannot store a session the server granted as authd stopped", metadata: ["error": "\(error.readableDescription)"])
            return false
        }
    }

    /// Deletes the stored session for a sign-out asked for after the driver stopped, as the
    /// keyring loop would have.
    func deleteAfterStop() async {
        do { try await store.delete(profile: profile) } catch {
            logger.error("keyring delete failed", metadata: ["error": "\(error.readableDescription)"])
        }
    }
}
