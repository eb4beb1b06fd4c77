@testable import AuthSocketServer
import Foundation
import NIOCore
import NIOEmbedded
import Testing

/// The idle closer on an embedded channel, whose clock moves only when the test moves it.
@Suite struct IdleConnectionCloserTests {
    private static let notice = "idle\n"

    /// A closer with a 300 ms timeout on a connection whose last activity lies long in the past,
    /// so that every check that runs on an active channel finds it idle; `connected` first or not.
    private func makeChannel(connected: Bool) throws -> (EmbeddedChannel, EmbeddedEventLoop) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        if connected { try connect(channel) }
        let (_, continuation) = AsyncStream<Outbox.Item>.makeStream()
        let outbox = Outbox(continuation: continuation, limit: 1024, finalLine: Data("final\n".utf8)) {}
        // The embedded loop's timers, on its own clock; "now" is the real one, long after 0.
        let closer = IdleConnectionCloser(timeout: .milliseconds(300), timers: EventLoopConnectionTimers(), activity: ConnectionActivity(now: 0), outbox: outbox,
                                          notice: ByteBuffer(string: Self.notice)) {}
        try channel.pipeline.syncOperations.addHandler(closer)
        return (channel, loop)
    }

    private func connect(_ channel: EmbeddedChannel) throws {
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    }

    @Test func theClockStartsWhenTheConnectionBecomesActiveNotWhenTheHandlerIsAdded() throws {
        // Added at accept time, before NIO has registered the channel: a check that fired then
        // would find nothing to close and must still come back.
        let (channel, loop) = try makeChannel(connected: false)
        loop.advanceTime(by: .seconds(1))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)

        try connect(channel)
        loop.advanceTime(by: .milliseconds(299))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        loop.advanceTime(by: .milliseconds(1))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: Self.notice))
        #expect(!channel.isActive)
    }

    @Test func addedToAnActiveConnectionItChecksATimeoutLater() throws {
        let (channel, loop) = try makeChannel(connected: true)
        loop.advanceTime(by: .milliseconds(300))
        #expect(try channel.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: Self.notice))
        #expect(!channel.isActive)
    }
}
