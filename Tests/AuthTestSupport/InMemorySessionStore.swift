import AuthCore
import Foundation
import Synchronization

/// A `SessionStore` in memory, with switches to make it fail or hold writes.
public final class InMemorySessionStore: SessionStore, Sendable {
    private struct State {
        var sessions: [String: Session] = [:]
        var failure: StoreFailure?
        var log: [String] = []
    }
    private let state = Mutex(State())

    /// Creates an empty store.
    public init(sessions: [String: Session] = [:]) {
        state.withLock { $0.sessions = sessions }
    }

    /// Makes every call fail with `failure` (nil restores normal behaviour).
    public func setFailure(_ failure: StoreFailure?) { state.withLock { $0.failure = failure } }

    /// The stored session of `profile`.
    public func stored(_ profile: String) -> Session? { state.withLock { $0.sessions[profile] } }

    /// Operations in order: `load:p`, `save:p`, `delete:p`.
    public var log: [String] { state.withLock { $0.log } }

    /// Reads.
    public func load(profile: String) async throws(StoreFailure) -> Session? {
        try state.withLock { (state: inout State) throws(StoreFailure) -> Session? in
            state.log.append("load:\(profile)")
            if let failure = state.failure { throw failure }
            return state.sessions[profile]
        }
    }

    /// Writes.
    public func save(_ session: Session, profile: String) async throws(StoreFailure) {
        try state.withLock { (state: inout State) throws(StoreFailure) in
            state.log.append("save:\(profile)")
            if let failure = state.failure { throw failure }
            state.sessions[profile] = session
        }
    }

    /// Deletes.
    public func delete(profile: String) async throws(StoreFailure) {
        try state.withLock { (state: inout State) throws(StoreFailure) in
            state.log.append("delete:\(profile)")
            if let failure = state.failure { throw failure }
            state.sessions[profile] = nil
        }
    }
}
