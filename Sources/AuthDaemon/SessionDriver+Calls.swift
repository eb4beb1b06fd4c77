import AuthCore
import FoundationEssentials

/// The calls the machine's actions ask for (the store read, a refresh, keyring writes), each
/// outcome fed back to the machine, which decides what it means.
extension SessionDriver {
    func loadStoredSession() async {
        do {
            let stored = try await store.load(profile: profile)
            logger.info(stored == nil ? "no stored session" : "read the stored session")
            apply(machine.storedSessionLoaded(stored, now: clock.now(), random: random()))
        } catch {
            logger.error("cannot read the stored session", metadata: ["error": "\(error.readableDescription)"])
            apply(machine.storedSessionUnavailable(error, now: clock.now(), random: random()))
        }
        for waiter in loadWaiters { waiter.resume() }
        loadWaiters.removeAll()
    }

    func refresh(_ refreshToken: String, generation: UInt64) async {
        do {
            let grant = try await api.refresh(refreshToken: refreshToken)
            apply(machine.refreshSucceeded(grant, generation: generation, now: clock.now()))
        } catch {
            switch error.refreshClass {
            case .fatal(let code): logger.warning("server ended the session", metadata: ["error.code": "\(code)"])
            case .transient: logger.notice("refresh failed; keeping the session", metadata: ["error": "\(error.readableDescription)"])
            }
            apply(machine.refreshFailed(error, generation: generation, now: clock.now(), random: random()))
        }
    }

    func runKeyringJobs() async {
        for await job in keyringJobs {
            switch job {
            case .store(let session, let generation):
                var failure: StoreFailure?
                do { try await store.save(session, profile: profile) } catch {
                    failure = error
                    logger.error("keyring write failed; serving the session from memory", metadata: ["error": "\(error.readableDescription)"])
                }
                apply(machine.storeFinished(generation: generation, failure: failure, now: clock.now(), random: random()))
            case .delete:
                do { try await store.delete(profile: profile) } catch {
                    logger.error("keyring delete failed", metadata: ["error": "\(error.readableDescription)"])
                }
            }
        }
    }
}
