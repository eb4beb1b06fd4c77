@testable import AuthSocketServer
import Foundation
import Synchronization
import Testing

/// The bounded outbound queue, without a socket: what is kept, what is dropped, when it overflows.
// The bound ends a failing test whose stream never yields what it waits for.
@Suite(.timeLimit(.minutes(5))) struct OutboxTests {
    /// Counts overflow callbacks.
    private final class Overflows: Sendable {
        let count = Atomic<Int>(0)
    }

    private func makeOutbox(limit: Int, overflows: Overflows = Overflows()) -> (Outbox, AsyncStream<Outbox.Item>) {
        let (stream, continuation) = AsyncStream<Outbox.Item>.makeStream()
        let outbox = Outbox(continuation: continuation, limit: limit, finalLine: Data("final\n".utf8)) {
            overflows.count.add(1, ordering: .relaxed)
        }
        return (outbox, stream)
    }

    /// What the writer would write, in order, until the stream ends.
    private func written(_ stream: AsyncStream<Outbox.Item>, by outbox: Outbox) async -> [String] {
        var lines: [String] = []
        for await item in stream where outbox.taken(item) {
            switch item {
            case .line(let data), .final(let data): lines.append(String(decoding: data, as: UTF8.self))
            }
        }
        return lines
    }

    @Test func linesWithinTheLimitAreKeptInOrder() async {
        let (outbox, stream) = makeOutbox(limit: 10)
        outbox.send(Data("abcd\n".utf8))
        outbox.send(Data("efgh\n".utf8))
        #expect(outbox.queuedBytes == 10)
        outbox.finish()
        #expect(await written(stream, by: outbox) == ["abcd\n", "efgh\n"])
        #expect(outbox.queuedBytes == 0)
    }

    @Test func passingTheLimitDropsTheQueueSendsTheFinalLineOnceAndIgnoresTheRest() async {
        let overflows = Overflows()
        let (outbox, stream) = makeOutbox(limit: 10, overflows: overflows)
        outbox.send(Data("abcd\n".utf8))
        outbox.send(Data("efgh\n".utf8))
        outbox.send(Data("x\n".utf8))   // 12 bytes > 10: overflow
        outbox.send(Data("y\n".utf8))   // after the overflow: dropped
        #expect(overflows.count.load(ordering: .relaxed) == 1)
        // The stream ended by itself; lines queued before the overflow are not written.
        #expect(await written(stream, by: outbox) == ["final\n"])
    }

    @Test func bytesTheWriterTookFreeRoomForMore() async {
        let (outbox, stream) = makeOutbox(limit: 10)
        var iterator = stream.makeAsyncIterator()
        for round in 0..<5 {
            outbox.send(Data("line\(round)\n".utf8))   // 6 bytes each: two never fit at once
            let item = await iterator.next()
            #expect(item.map(outbox.taken) == true)
        }
        outbox.finish()
        #expect(await iterator.next() == nil)
    }

    @Test func nothingIsQueuedAfterTheConnectionFinished() async {
        let (outbox, stream) = makeOutbox(limit: 100)
        outbox.finish()
        outbox.send(Data("late\n".utf8))
        #expect(outbox.queuedBytes == 0)
        #expect(await written(stream, by: outbox).isEmpty)
    }
}

/// When a quiet connection counts as idle.
@Suite struct ConnectionActivityTests {
    private let second: UInt64 = 1_000_000_000

    @Test func aQuietConnectionIsIdleOnceTheTimeoutPassedSinceItsLastLine() {
        let activity = ConnectionActivity(now: 0)
        #expect(activity.idleIn(timeout: 10 * second, now: 4 * second, queuedBytes: 0) == 6 * second)
        activity.touch(now: 5 * second)
        #expect(activity.idleIn(timeout: 10 * second, now: 14 * second, queuedBytes: 0) == second)
        #expect(activity.idleIn(timeout: 10 * second, now: 15 * second, queuedBytes: 0) == 0)
    }

    @Test func aRequestInFlightOrUnwrittenOutputKeepsItBusyAndTheAnswerCountsAsActivity() {
        let activity = ConnectionActivity(now: 0)
        activity.requestStarted()
        #expect(activity.idleIn(timeout: second, now: 100 * second, queuedBytes: 0) == nil)
        activity.requestFinished(now: 100 * second)
        #expect(activity.idleIn(timeout: second, now: 100 * second, queuedBytes: 7) == nil)
        #expect(activity.idleIn(timeout: second, now: 100 * second, queuedBytes: 0) == second)
    }

    @Test func aSubscriberIsNeverIdle() {
        let activity = ConnectionActivity(now: 0)
        activity.markSubscribed()
        #expect(activity.idleIn(timeout: second, now: 1_000 * second, queuedBytes: 0) == nil)
    }

    @Test func aTouchThatLandsAfterTheReadingOfNowIsNotAWrapAround() {
        let activity = ConnectionActivity(now: 0)
        activity.touch(now: 20 * second)
        #expect(activity.idleIn(timeout: 10 * second, now: 19 * second, queuedBytes: 0) == 10 * second)
    }
}
