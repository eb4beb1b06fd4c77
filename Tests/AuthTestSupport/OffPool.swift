import Foundation

/// Runs a blocking test body on a thread of its own, so that sleeping, waiting for processes or
/// blocking in a system call never starves Swift's cooperative pool, which other suites'
/// in-process daemons, bus watchers and supervisors run on (two threads on a two-core machine).
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 4 << 20
        thread.start()
    }
}
