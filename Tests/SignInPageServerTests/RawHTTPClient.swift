import NIOCore
import NIOPosix

/// A client that sends bytes as they are given and reads until the server closes: what a
/// browser, a slow client or a hostile program sends, on real TCP to 127.0.0.1. On SwiftNIO, so
/// that no test blocks a thread of Swift's pool.
enum RawHTTPClient {
    /// Connects to `port`, sends `parts` (one write each), and returns everything the server sent
    /// before it closed; a server that has not closed within `seconds` fails the exchange rather
    /// than hold the test (the bound only ends a failing run).
    static func exchange(port: UInt16, _ parts: [String], seconds: Int64 = 60) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: "127.0.0.1", port: Int(port)) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let deadline = channel.channel.eventLoop.scheduleTask(in: .seconds(seconds)) { channel.channel.close(promise: nil) }
        let received = try await channel.executeThenClose { inbound, outbound in
            do {
                for part in parts { try await outbound.write(ByteBuffer(string: part)) }
            } catch {
                // The server closed first (a refused connection): what it sent is still read below.
            }
            var received = ""
            do {
                for try await chunk in inbound { received += String(buffer: chunk) }
            } catch {
                // A reset after the answer still leaves the answer.
            }
            return received
        }
        deadline.cancel()
        // The task's future succeeds only when the deadline closed the channel.
        if (try? await deadline.futureResult.get()) != nil { throw RawHTTPTimeout(seconds: seconds, received: received) }
        return received
    }

    /// A GET of `target`, as a browser sends it.
    static func get(_ target: String, port: UInt16) -> String {
        "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: test\r\n\r\n"
    }

    /// A POST of `body` to `target`.
    static func post(_ target: String, body: String, port: UInt16) -> String {
        "POST \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    }
}

/// The server neither answered in full nor closed within the exchange's bound.
struct RawHTTPTimeout: Error, CustomStringConvertible {
    let seconds: Int64
    let received: String
    var description: String { "the server had not closed after \(seconds) s; it had sent: \(received.prefix(200))" }
}
