import AuthCore
import FoundationEssentials

/// The driver once its job loop has ended (authd stopping, or its task cancelled): nothing
/// carries out the machine's actions any more, so no request may wait for them. Nothing is
/// written to the keyring then but a sign-out's delete: a session the server granted to a call
/// still out (a sign-in, an MFA verification) is not kept, as when authd is killed, and the call
/// fails as `stopping`; a take-over whose session was stored before reports `interrupted`
/// (`adoptTakenOver`). A graceful stop does not come to this: the socket stops, and its requests
/// end, before the drivers do.
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

    /// Makes the delete the machine asked for after the keyring loop ended (a sign-out, or the
    /// server ending the session), as the loop would have: once the driver has stopped, and so
    /// the loop's last write is done. Called at the stop for those that came just before it, and
    /// after each input that may end the session once stopped. Deletes are the only writes then,
    /// so none can be overtaken by a store.
    func makeOwedDelete() async {
        guard stopped, deleteOwed else { return }
        deleteOwed = false
        do { try await store.delete(profile: profile) } catch {
            logger.error("keyring delete failed", metadata: ["error": "\(error.readableDescription)"])
        }
    }
}
