import AuthCore
import AuthDaemon
import AuthdClient
import AuthProtocol
import AuthSocketServer
import AuthTestSupport
import Foundation
import Logging
import ServiceLifecycle
import SignInPage
import Synchronization

/// An in-process daemon on a real Unix socket, with a fake GoTrue and an in-memory store.
struct DaemonHarness: Sendable {
    let socketPath: String
    let api: FakeGoTrue
    let store: InMemorySessionStore
    let dispatcher: RequestDispatcher

    /// A fresh directory for a harness's socket, `authd.sock` inside it.
    static func newSocketPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("authd-test-\(UUID().uuidString.prefix(8))")
            .appendingPathComponent("authd.sock").path
    }

    /// Runs `body` against a daemon serving profile "default" on `path`; everything stops when it
    /// returns.
    /// Sign-in pages are served through `pages` and opened with `browserOpener` (none: this
    /// daemon serves none), on the clocks given; connections keep time on `timers`.
    static func run(api: FakeGoTrue = FakeGoTrue(), store: InMemorySessionStore = InMemorySessionStore(),
                    limits: ConnectionLimits = ConnectionLimits(), timers: any ConnectionTimers = EventLoopConnectionTimers(),
                    at path: String = newSocketPath(),
                    pages: (any SignInPageListening)? = nil, browserOpener: (any BrowserOpener)? = nil,
                    clock: any WallClock = SystemClock(), monotonic: any MonotonicClock = SystemMonotonicClock(),
                    observer: ConnectionObserver? = nil,
                    _ body: @Sendable (DaemonHarness) async throws -> Void) async throws {
        let directory = URL(fileURLWithPath: (path as NSString).deletingLastPathComponent)
        let logger = Logger(label: "authd-test")
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: store, api: api, clock: clock, monotonic: monotonic,
                                   policy: RefreshPolicy(jitterFraction: 0), logger: logger)
        let profile = ProfileServices(session: driver, pages: pages, browserOpener: browserOpener)
        let dispatcher = RequestDispatcher(registry: ProfileRegistry(profiles: [profile], defaultProfile: "default"), logger: logger)
        let handler: any SocketRequestHandler = observer.map { ObservedHandler(inner: dispatcher, observer: $0) } ?? dispatcher
        let server = UnixSocketServer(path: path, handler: handler, logger: logger, limits: limits, timers: timers)
        let harness = DaemonHarness(socketPath: path, api: api, store: store, dispatcher: dispatcher)
        // Stopped the way SIGTERM stops authd: graceful shutdown of a ServiceGroup.
        var configuration = ServiceGroupConfiguration(services: [.init(service: profile), .init(service: server)],
                                                      gracefulShutdownSignals: [], logger: logger)
        // A graceful shutdown that does not end (a connection still waiting) is escalated to
        // cancellation, which every service answers, rather than hold the test forever.
        configuration.maximumGracefulShutdownDuration = .seconds(30)
        let services = ServiceGroup(configuration: configuration)
        let ended = StartFailure()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do { try await services.run() } catch {
                    ended.error.withLock { $0 = error }
                    throw error
                }
            }
            // The socket appears at its path only once it listens (DaemonSocketTests checks that);
            // a server that failed to start says why at once.
            let listening = try await eventually {
                if let error = ended.error.withLock({ $0 }) { throw error }
                return access(path, F_OK) == 0
            }
            guard listening else {
                await services.triggerGracefulShutdown()
                throw HarnessError(description: "the socket never appeared at \(path)")
            }
            do {
                try await body(harness)
            } catch {
                await services.triggerGracefulShutdown()
                throw error
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A typed client connection (blocking calls are made off the cooperative pool with `offPool`).
    func connect() throws -> AuthdConnection { try AuthdConnection.connect(socketPath: socketPath) }

    /// A raw line connection.
    func raw() throws -> LineConnection { try LineConnection.connect(path: socketPath) }

    /// A raw connection the daemon serves rather than refuses as busy: `request` is written on a
    /// new connection and its answer read, and one whose answer `isServed` does not accept is
    /// closed and another tried. A slot comes back a moment after its connection ends, and
    /// connections take their slots on NIO's event loops, not strictly in connect order, so a
    /// refusal is retried for up to `seconds`, a bound only a failing run reaches; nil if none was
    /// served by then. It blocks: call it inside `offPool`.
    func servedRaw(sending request: Data, seconds: Double = 30, isServed: ([UInt8]?) -> Bool) throws -> LineConnection? {
        let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
        repeat {
            let connection = try raw()
            connection.setReadTimeout(20)
            // A refused connection may be closed before the request is written.
            if (try? connection.write(request)) != nil, isServed(try? connection.readLine()) { return connection }
            connection.close()
            Thread.sleep(forTimeInterval: 0.02)
        } while ContinuousClock.now < deadline
        return nil
    }

    /// A raw connection subscribed to the default profile's events, past the acknowledgement and
    /// the `INITIAL_SESSION` snapshot; its reads wait at most `timeout` seconds.
    func subscriber(timeout: Double = 30) async throws -> LineConnection {
        try await offPool {
            let watcher = try raw()
            watcher.setReadTimeout(timeout)
            try watcher.write(Data("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"events.subscribe\"}\n".utf8))
            _ = try watcher.readLine()   // acknowledgement
            _ = try watcher.readLine()   // INITIAL_SESSION
            return watcher
        }
    }
}

/// The dispatcher, telling the test's observer of each connection that sent a request, and of
/// each the server is done with (after the dispatcher has dropped what it registered for it).
private struct ObservedHandler: SocketRequestHandler {
    let inner: RequestDispatcher
    let observer: ConnectionObserver

    func handle(line: Data, connection: ConnectionContext) async {
        observer.requested(connection)
        await inner.handle(line: line, connection: connection)
    }

    func connectionClosed(_ connection: ConnectionContext) async {
        await inner.connectionClosed(connection)
        observer.closed(connection)
    }

    func answerAtOnce(line: UnsafeRawBufferPointer, connection: ConnectionContext) -> ImmediateAnswer {
        observer.requested(connection)
        return inner.answerAtOnce(line: line, connection: connection)
    }
}

/// Why the harness's services ended while it waited for the socket, if they did.
final class StartFailure: Sendable {
    let error = Mutex<(any Error)?>(nil)
}

/// The harness could not start its daemon.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
}

/// The JSON object of a line.
func object(_ line: [UInt8]?) -> [String: Any] {
    guard let line else { return [:] }
    return (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] ?? [:]
}

/// The error code of a response line.
func errorCode(_ line: [UInt8]?) -> Int? { (object(line)["error"] as? [String: Any])?["code"] as? Int }
