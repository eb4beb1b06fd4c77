import FoundationEssentials

/// What a `SessionMachine` knows about its traffic with the keyring: the writes handed out and
/// not yet finished, whether writing fails and when to try again, and whether the stored session
/// is being read again after the keyring was unreadable. A value the machine owns; its rules
/// about what to do next stay in the machine.
struct KeyringRetryState: Sendable {
    /// The last write's failure, while writing fails (the session lives in memory only).
    var failure: StoreFailure?
    /// When a failed write is tried again.
    var storeRetryAt: Date?
    /// Failed writes in a row, for the backoff.
    var storeFailures = 0
    /// A rewrite of the served session (a retry, or a change in place) is out.
    var storeRetryInFlight = false
    /// The writes handed to the store and not yet finished, in order (the store writes one at a
    /// time, in order): whether each brings in a new session, and for which generation. A
    /// finished write is matched to its own entry, so a rewrite finishing first can never adopt
    /// a new session whose own write is still out.
    private(set) var writes: [(generation: UInt64, adopts: Bool)] = []
    /// The session changed while a rewrite was out: write it again once that one finishes.
    var storeAgainAfterWrite = false
    /// Failed reads in a row, for the backoff.
    private(set) var loadFailures = 0
    /// A read of the stored session is out.
    private(set) var loadInFlight = false
    /// When the last read was started.
    private(set) var lastLoadAt: Date?

    /// Notes a write handed to the store.
    mutating func noteWrite(generation: UInt64, adopts: Bool) { writes.append((generation, adopts)) }

    /// The oldest write still out, which is the one that just finished; nil when none is out.
    mutating func takeFinishedWrite() -> (generation: UInt64, adopts: Bool)? {
        writes.isEmpty ? nil : writes.removeFirst()
    }

    /// Forgets every failed or pending rewrite (a new session, a sign-out, a successful write).
    mutating func clearStoreRetry() {
        storeFailures = 0
        storeRetryAt = nil
        storeRetryInFlight = false
        storeAgainAfterWrite = false
    }

    /// A read of the stored session starts at `now`.
    mutating func startLoad(now: Date) {
        loadInFlight = true
        lastLoadAt = now
    }

    /// The stored session was read.
    mutating func loadSucceeded() {
        loadInFlight = false
        loadFailures = 0
    }

    /// Reading failed; returns the number of failed reads in a row.
    mutating func loadFailed() -> Int {
        loadInFlight = false
        loadFailures += 1
        return loadFailures
    }

    /// A read that was out no longer matters (a sign-in or sign-out replaced the session).
    mutating func abandonLoad() { loadInFlight = false }

    /// Moves the retry date with a wall clock set back by `offset` seconds.
    mutating func shift(by offset: TimeInterval) { storeRetryAt = storeRetryAt?.addingTimeInterval(offset) }
}
