import AuthCore
import BlockingCalls
import CAuthdSecret
import Dispatch
import FoundationEssentials
import Synchronization

/// `SessionStore` on the Secret Service through libsecret.
///
/// libsecret's sync calls block on D-Bus (and, on a desktop, possibly on an unlock dialog), so
/// every call runs on one private thread, never on the caller's, and is abandoned after
/// `timeout`. The single thread also keeps writes in the order they were asked for.
public struct LibsecretStore: SessionStore {
    private let lane = BlockingLane(name: "authd.keyring")
    private let timeout: TimeInterval
    private let labelPrefix: String

    /// Creates a store whose calls give up after `timeout` seconds.
    public init(timeout: TimeInterval = 10, labelPrefix: String = "authd session") {
        self.timeout = timeout
        self.labelPrefix = labelPrefix
    }

    /// Starts connecting to the Secret Service on the store's thread, where the calls that follow
    /// queue behind it and find the connection made: the daemon calls it early in its start, so that the
    /// D-Bus handshake and the session's key exchange (most of a cold read) overlap the rest of
    /// start-up instead of following it (benchmark P6). Returns at once. A failure is not
    /// reported here: the first real call meets it again and reports it.
    public func connectAhead() {
        lane.submit {
            var message: UnsafeMutablePointer<CChar>?
            _ = authd_secret_connect(&message)
            authd_secret_free(message)
        }
    }

    /// Reads the session of `profile`.
    public func load(profile: String) async throws(StoreFailure) -> Session? {
        let text: String? = try await run { () throws(StoreFailure) -> String? in
            var secret: UnsafeMutablePointer<CChar>?
            var message: UnsafeMutablePointer<CChar>?
            let status = authd_secret_lookup(profile, &secret, &message)
            defer { authd_secret_free(secret); authd_secret_free(message) }
            if status == AUTHD_SECRET_NOT_FOUND { return nil }
            try Self.check(status, message)
            return secret.map { String(cString: $0) }
        }
        guard let text else { return nil }
        do {
            return try JSONDecoder().decode(StoredSession.self, from: Data(text.utf8)).session
        } catch {
            throw .corrupt("not a session this version understands")
        }
    }

    /// Writes the session of `profile`.
    public func save(_ session: Session, profile: String) async throws(StoreFailure) {
        let json: String
        do {
            json = String(decoding: try JSONEncoder().encode(StoredSession(session: session)), as: UTF8.self)
        } catch {
            throw .corrupt("session could not be encoded")
        }
        let label = "\(labelPrefix) (\(profile))"
        try await run { () throws(StoreFailure) in
            var message: UnsafeMutablePointer<CChar>?
            let status = authd_secret_store(profile, label, json, &message)
            defer { authd_secret_free(message) }
            try Self.check(status, message)
        }
    }

    /// Removes the session of `profile`.
    public func delete(profile: String) async throws(StoreFailure) {
        try await run { () throws(StoreFailure) in
            var message: UnsafeMutablePointer<CChar>?
            let status = authd_secret_clear(profile, &message)
            defer { authd_secret_free(message) }
            try Self.check(status, message)
        }
    }

    private static func check(_ status: authd_secret_status, _ message: UnsafeMutablePointer<CChar>?) throws(StoreFailure) {
        switch status {
        case AUTHD_SECRET_OK: return
        case AUTHD_SECRET_LOCKED: throw .locked
        case AUTHD_SECRET_NOT_FOUND: throw .corrupt("entry vanished")
        default: throw .unavailable(message.map { String(cString: $0) } ?? "unknown error")
        }
    }

    /// Runs `work` on the keyring queue; throws `.timedOut` if it has not finished in time.
    private func run<T: Sendable>(_ work: @escaping @Sendable () throws(StoreFailure) -> T) async throws(StoreFailure) -> T {
        let once = ResumeOnce<T>()
        let result: Result<T, StoreFailure> = await withCheckedContinuation { continuation in
            once.install(continuation)
            lane.submit {
                do throws(StoreFailure) { once.resume(.success(try work())) } catch { once.resume(.failure(error)) }
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { once.resume(.failure(.timedOut)) }
        }
        return try result.get()
    }
}

/// Resumes a continuation exactly once, whichever of the work or the timeout comes first.
private final class ResumeOnce<T: Sendable>: @unchecked Sendable {
    private let continuation = Mutex<CheckedContinuation<Result<T, StoreFailure>, Never>?>(nil)

    func install(_ continuation: CheckedContinuation<Result<T, StoreFailure>, Never>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(_ result: Result<T, StoreFailure>) {
        let pending = continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }
        pending?.resume(returning: result)
    }
}

/// The keyring entry's JSON: versioned so a later format can still read old entries.
struct StoredSession: Codable {
    var version = 1
    var session: Session
}
