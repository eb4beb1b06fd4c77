#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Synchronization

/// The write end of the pipe through which the SIGINT handler wakes the armed `InterruptWatch`,
/// or -1. A global, because a C signal handler can reach nothing else; it is first touched (and so
/// initialised) before the handler is installed, so the handler never runs Swift's lazy set-up.
private let interruptWakeup = Atomic<Int32>(-1)
/// How many Ctrl-Cs came while a watch was armed.
private let interruptsSeen = Atomic<Int>(0)

/// The SIGINT handler: async-signal-safe work only (atomics, `write`, `_exit`).
private func onInterrupt(_: Int32) {
    guard interruptsSeen.wrappingAdd(1, ordering: .sequentiallyConsistent).oldValue == 0 else { _exit(130) }
    // The code the signal interrupted may read errno next (a call that failed with EINTR): the
    // write must not change it.
    let saved = errno
    var byte: UInt8 = 1
    _ = write(interruptWakeup.load(ordering: .sequentiallyConsistent), &byte, 1)
    errno = saved
}

/// Ctrl-C (SIGINT) caught while armed: the first calls `onFirst` on a queue of its own, and a
/// second ends the process at once with status 130, as the shell expects of an interrupted command.
///
/// The handler is in place when `init` returns. A libdispatch signal source alone is not: it sets
/// its handler asynchronously after `resume()`, and a Ctrl-C that came in between, with SIGINT
/// ignored meanwhile as such a source needs, was lost (`authctl login` then waited on). So the
/// handler is a plain one, installed at once, that wakes a read source through a pipe, where the
/// byte waits however late the source starts. One watch is armed at a time.
public final class InterruptWatch {
    private let source: any DispatchSourceRead
    private let previous: sigaction

    /// Whether Ctrl-C came since this watch was armed.
    public var happened: Bool { interruptsSeen.load(ordering: .sequentiallyConsistent) > 0 }

    /// Arms the watch; nil when Ctrl-C was ignored already (a command a non-interactive shell
    /// started with `&` inherits SIGINT ignored, and is meant to stay deaf to it), or when no pipe
    /// could be had (no descriptor left). Ctrl-C then does what it did before.
    public init?(onFirst: @escaping @Sendable () -> Void) {
        var inherited = sigaction()
        guard sigaction(SIGINT, nil, &inherited) == 0,
              unsafeBitCast(inherited.__sigaction_handler.sa_handler, to: Int.self) != unsafeBitCast(SIG_IGN, to: Int.self)
        else { return nil }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        // Close-on-exec (pipe2 is not in Swift's Glibc: a child another thread started in
        // between would inherit them; authctl starts none then), and non-blocking: the
        // handler's write must never wait.
        for end in [readEnd, writeEnd] {
            guard fcntl(end, F_SETFD, FD_CLOEXEC) == 0, fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) == 0 else {
                close(readEnd)
                close(writeEnd)
                return nil
            }
        }
        interruptsSeen.store(0, ordering: .sequentiallyConsistent)
        interruptWakeup.store(writeEnd, ordering: .sequentiallyConsistent)
        source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: DispatchQueue(label: "authd.interrupt"))
        source.setEventHandler {
            var drained = [UInt8](repeating: 0, count: 8)
            // Only the handler's byte calls onFirst, once: the handler writes one and exits at a second.
            guard read(readEnd, &drained, drained.count) > 0 else { return }
            onFirst()
        }
        // Neither end is closed: a handler running on another thread as the watch is disarmed
        // could otherwise write to a descriptor number reused meanwhile. The process's next exec
        // or exit closes them (close-on-exec).
        source.resume()
        var action = sigaction()
        action.__sigaction_handler.sa_handler = onInterrupt
        sigemptyset(&action.sa_mask)
        // Blocking calls elsewhere carry on after the handler rather than fail with EINTR.
        action.sa_flags = SA_RESTART
        var before = sigaction()
        guard sigaction(SIGINT, &action, &before) == 0 else {
            interruptWakeup.store(-1, ordering: .sequentiallyConsistent)
            source.cancel()
            return nil
        }
        previous = before
    }

    /// Ctrl-C does again what it did before the watch was armed.
    public func disarm() {
        var restored = previous
        sigaction(SIGINT, &restored, nil)
        interruptWakeup.store(-1, ordering: .sequentiallyConsistent)
        source.cancel()
    }
}
