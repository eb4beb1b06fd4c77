import FoundationEssentials
import BlockingCalls
#if canImport(Glibc)
import Glibc
#endif

/// Runs blocking C code on a thread of its own and stops it when the calling task is cancelled,
/// through a pipe the C code polls beside its own descriptor.
///
/// A dedicated thread, not Dispatch: on Linux the global queues share threads with Swift's
/// cooperative pool, and these calls block in `poll` for as long as they wait (the watchers for
/// as long as the daemon runs).
enum BlockingWatch {
    /// The signature of the C watchers: `(stop_fd, callback, context) -> 0 or -errno`. A Swift
    /// function type, so that a closure can pass a watcher further arguments (a bus address).
    typealias Watcher = @Sendable (Int32, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?, UnsafeMutableRawPointer?) -> Int32

    /// Runs `watcher` until cancellation, calling `onEvent` for each event. Returns the watcher's
    /// result: 0 after a stop, -errno when it could not watch at all.
    static func run(name: String, _ watcher: @escaping Watcher, onEvent: @escaping @Sendable () -> Void) async -> Int32 {
        let box = CallbackBox(onEvent)
        return await run(name: name) { stop in
            // The closure keeps `box` alive for as long as the watcher runs.
            let context = Unmanaged.passUnretained(box).toOpaque()
            return watcher(stop, { context in
                guard let context else { return }
                Unmanaged<CallbackBox>.fromOpaque(context).takeUnretainedValue().call()
            }, context)
        }
    }

    /// Runs `body(stopFD)` on a thread named `name` and returns what it returns. Cancelling the
    /// calling task makes `stopFD` readable; `body` is expected to return soon after. Returns
    /// -errno without running `body` when no pipe can be made.
    static func run(name: String, _ body: @escaping @Sendable (Int32) -> Int32) async -> Int32 {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return -errno }
        // Close-on-exec; a process spawned before this line closes everything but its standard
        // descriptors anyway (SpawnedProcess).
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let (stop, stopWriter) = (pipeEnds[0], pipeEnds[1])
        defer {
            close(stop)
            close(stopWriter)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
                // A lane of its own, released at once: its thread ends when the body has run.
                BlockingLane(name: name).submit { continuation.resume(returning: body(stop)) }
            }
        } onCancel: {
            var byte: UInt8 = 1
            _ = write(stopWriter, &byte, 1)
        }
    }
}

/// Carries a Swift closure through a C `void *` context.
private final class CallbackBox: Sendable {
    private let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    func call() { body() }
}
