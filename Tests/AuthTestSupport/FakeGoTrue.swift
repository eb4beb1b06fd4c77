import AuthCore
import Foundation
import Synchronization

/// A `GoTrueAPI` that follows a script: sign-in checks one password, refreshes rotate a counter
/// or fail as told, and every call is counted.
public final class FakeGoTrue: GoTrueAPI, Sendable {
    private struct State {
        var password = "correct horse"
        var lifetime = 3600
        var counter = 0
        var refreshFailures: [ServerFailure] = []
        var refreshCalls = 0
        var signOutCalls: [SignOutScope] = []
        var refreshDelay: Duration = .zero
        var serverClock: Result<Date?, ServerFailure> = .success(nil)
    }
    private let state = Mutex(State())

    /// Creates a fake whose tokens live `lifetime` seconds.
    public init(lifetime: Int = 3600) { state.withLock { $0.lifetime = lifetime } }

    /// The next refreshes fail with these, in order.
    public func failNextRefreshes(_ failures: [ServerFailure]) { state.withLock { $0.refreshFailures = failures } }
    /// Makes each refresh take this long (to let requests pile up).
    public func setRefreshDelay(_ delay: Duration) { state.withLock { $0.refreshDelay = delay } }
    /// What `health()` answers: the server's clock, or a failure.
    public func setServerClock(_ clock: Result<Date?, ServerFailure>) { state.withLock { $0.serverClock = clock } }
    /// The scripted `health()` answer.
    public func health() async throws(ServerFailure) -> Date? { try state.withLock { $0.serverClock }.get() }
    /// How many refresh calls were made.
    public var refreshCalls: Int { state.withLock { $0.refreshCalls } }
    /// The scopes of sign-out calls, in order.
    public var signOutCalls: [SignOutScope] { state.withLock { $0.signOutCalls } }

    /// A grant as sign-in or refresh returns it; tokens are `access-N` / `refresh-N`.
    public func grant() -> SessionGrant {
        state.withLock { state in
            state.counter += 1
            return SessionGrant(accessToken: "access-\(state.counter)", refreshToken: "refresh-\(state.counter)",
                                expiresIn: state.lifetime, user: UserSummary(id: "user-1", email: "a@example.com"))
        }
    }

    /// Accepts `a@example.com` with the configured password.
    public func signIn(email: String, password: String) async throws(ServerFailure) -> SessionGrant {
        let ok = state.withLock { $0.password == password }
        guard ok, email == "a@example.com" else {
            throw .http(status: 400, code: "invalid_credentials", message: "Invalid login credentials", retryAfter: nil)
        }
        return grant()
    }

    /// Rotates, or fails with the next scripted failure.
    public func refresh(refreshToken: String) async throws(ServerFailure) -> SessionGrant {
        let (failure, delay) = state.withLock { state -> (ServerFailure?, Duration) in
            state.refreshCalls += 1
            return (state.refreshFailures.isEmpty ? nil : state.refreshFailures.removeFirst(), state.refreshDelay)
        }
        if delay > .zero { try? await Task.sleep(for: delay) }
        if let failure { throw failure }
        return grant()
    }

    /// Records the scope.
    public func signOut(accessToken: String, scope: SignOutScope) async throws(ServerFailure) {
        state.withLock { $0.signOutCalls.append(scope) }
    }
}
