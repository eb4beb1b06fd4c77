import AuthTestSupport
import FoundationGaps
import Glibc
import Synchronization
import Testing

/// `InterruptWatch` in this process: SIGINT is sent to the process, as a terminal's Ctrl-C is, and
/// runs the handler on a thread that does not block it (the pool's threads do, so `raise` on the
/// test's own thread would leave it pending). Around each test SIGINT has a handler that does
/// nothing, so that a watch that failed to catch it leaves the test failing rather than the process
/// killed. The suite is serialized: the tests change the one SIGINT disposition of the process.
@Suite(.serialized) struct InterruptWatchTests {
    /// Whether the watch handed the Ctrl-C on.
    private final class HandedOn: Sendable {
        let value = Atomic<Bool>(false)
    }

    /// The address of SIGINT's handler now (SIG_IGN is 1, SIG_DFL 0).
    private func currentHandler() -> Int {
        var now = sigaction()
        sigaction(SIGINT, nil, &now)
        return unsafeBitCast(now.__sigaction_handler.sa_handler, to: Int.self)
    }

    @Test func aCtrlCTheMomentItIsArmedIsSeenHandedOnAndTheOldHandlerComesBack() async throws {
        let before = signal(SIGINT, { _ in })
        defer { signal(SIGINT, before) }
        let placeholder = currentHandler()
        let handedOn = HandedOn()
        let watch = try #require(InterruptWatch { handedOn.value.store(true, ordering: .sequentiallyConsistent) })
        #expect(currentHandler() != placeholder, "the watch set no handler of its own")
        // No wait between arming and the signal: a handler set up later (as a libdispatch signal
        // source sets its own, after resume) misses it, and before, authctl then waited on.
        kill(getpid(), SIGINT)
        #expect(await eventually { watch.happened }, "a Ctrl-C right after arming was lost")
        // Handed on from the watch's own queue (the bound only ends a failing test).
        #expect(await eventually { handedOn.value.load(ordering: .sequentiallyConsistent) })
        watch.disarm()
        #expect(currentHandler() == placeholder, "disarming did not put back the handler that was there")
    }

    /// A command started with Ctrl-C ignored (with `&` by a non-interactive shell) is meant to
    /// stay deaf to it: the watch does not arm, and SIGINT stays ignored.
    @Test func aCtrlCIgnoredAlreadyStaysIgnored() {
        let before = signal(SIGINT, SIG_IGN)
        defer { signal(SIGINT, before) }
        let ignored = currentHandler()
        #expect(InterruptWatch { Issue.record("an ignored Ctrl-C was handed on") } == nil)
        #expect(currentHandler() == ignored, "the watch replaced the ignoring disposition")
    }
}
