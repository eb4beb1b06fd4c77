import AuthProtocol
import BlockingCalls
import FoundationEssentials
import Synchronization

/// The auth-state events of one profile, as an async sequence that throws only `AuthdError`.
///
/// Each iteration starts its own connection and subscription; stop iterating (or cancel the
/// task) and it is closed.
public struct AuthdEventStream: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = AuthEvent
    /// The only error the stream ends with.
    public typealias Failure = AuthdError

    let greeter: DaemonGreeter
    let profile: String?

    /// Starts the connection and subscription.
    public func makeAsyncIterator() -> Iterator {
        let (stream, continuation) = AsyncStream<Result<AuthEvent, AuthdError>>.makeStream()
        let pump = EventPump(greeter: greeter, profile: profile, continuation: continuation)
        continuation.onTermination = { _ in pump.stop() }
        pump.start()
        return Iterator(base: stream.makeAsyncIterator())
    }

    /// Hands out the events in order.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Result<AuthEvent, AuthdError>>.Iterator

        /// The next event; nil once the stream is over (its task cancelled, or after an error).
        public mutating func next() async throws(AuthdError) -> AuthEvent? {
            try await next(isolation: nil)
        }

        /// The next event, without leaving the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(AuthdError) -> AuthEvent? {
            guard let item = await base.next(isolation: actor) else { return nil }
            return try item.get()
        }
    }
}

/// The thread behind one event stream: connect, hello, subscribe, read; again after a break.
final class EventPump: @unchecked Sendable {
    // Unchecked: the connection and whether the stream stopped are shared with `stop()` under
    // `state`; `AuthdConnection` is used on the pump's thread, and by `stop()` only to interrupt it.
    private let greeter: DaemonGreeter
    private let profile: String?
    private let continuation: AsyncStream<Result<AuthEvent, AuthdError>>.Continuation
    private let state = Mutex<(connection: AuthdConnection?, stopped: Bool)>((nil, false))
    /// Ends the wait between reconnections when the stream stops.
    private let wakeup = Wakeup()

    /// The first wait before reconnecting, and the longest.
    static let firstDelay: TimeInterval = 0.05
    static let longestDelay: TimeInterval = 2

    init(greeter: DaemonGreeter, profile: String?, continuation: AsyncStream<Result<AuthEvent, AuthdError>>.Continuation) {
        self.greeter = greeter
        self.profile = profile
        self.continuation = continuation
    }

    func start() {
        // A lane of its own, released at once: its thread ends when the pump has run.
        BlockingLane(name: "authd-events").submit { self.run() }
    }

    /// Ends the stream: wakes the thread from a read or a wait.
    func stop() {
        state.withLock {
            $0.stopped = true
            $0.connection?.interruptForStop()
        }
        wakeup.post()
    }

    private func run() {
        var subscribedOnce = false
        var delay = Self.firstDelay
        while !isStopped {
            do throws(AuthdError) {
                let (opened, _) = try greeter.open()
                guard adopt(opened) else { opened.close(); break }
                defer { release(opened) }
                try opened.subscribe(profile: profile)
                let reconnected = subscribedOnce
                subscribedOnce = true
                delay = Self.firstDelay
                var first = true
                while true {
                    let message: AuthEventMessage?
                    message = try opened.nextEvent()
                    guard let message else { break }
                    continuation.yield(.success(AuthEvent(message, afterReconnect: reconnected && first)))
                    first = false
                }
            } catch {
                // Waiting mends a daemon that is restarting; it does not mend a wrong profile or a
                // refusal, nor a socket that never had a daemon behind it.
                let waitable: Bool
                switch error {
                case .daemonUnavailable, .timedOut: waitable = subscribedOnce
                default: waitable = false
                }
                if !waitable && !isStopped {
                    continuation.yield(.failure(error))
                    break
                }
            }
            wait(delay)
            delay = min(delay * 2, Self.longestDelay)
        }
        continuation.finish()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Makes `opened` the connection `stop()` interrupts; false when the stream already stopped.
    private func adopt(_ opened: AuthdConnection) -> Bool {
        state.withLock {
            guard !$0.stopped else { return false }
            $0.connection = opened
            return true
        }
    }

    private func release(_ opened: AuthdConnection) {
        state.withLock { $0.connection = nil }
        opened.close()
    }

    private func wait(_ seconds: TimeInterval) {
        if !isStopped { wakeup.wait(seconds: seconds) }
    }
}
