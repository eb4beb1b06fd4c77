import NIOCore

/// Asks an HTTP proxy for a tunnel with CONNECT and reads its answer's head; on a 2xx it leaves
/// the pipeline, and what follows is the server's.
final class ProxyTunnelHandler: StageHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The longest answer head read from a proxy.
    private static let headLimit = 16 * 1024

    let outcome: EventLoopPromise<Void>
    var isSettled = false
    private let authority: String
    private let authorization: String?
    private var received = ByteBuffer()

    init(authority: String, authorization: String?, opened: EventLoopPromise<Void>) {
        self.authority = authority
        self.authorization = authorization
        self.outcome = opened
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization { request += "Proxy-Authorization: \(authorization)\r\n" }
        request += "\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: request)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isSettled else { return }
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        let view = received.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
            if received.readableBytes > Self.headLimit { fail(HTTPExchangeError.proxyRefused(status: 0), closing: context) }
            return
        }
        let statusLine = view[view.startIndex..<end.lowerBound].prefix { $0 != UInt8(ascii: "\r") }
        let status = Self.status(of: String(decoding: statusLine, as: UTF8.self))
        // The server speaks only once the request or the TLS greeting has gone through the
        // tunnel, so bytes after the head mean the proxy did not open one.
        guard (200..<300).contains(status), end.upperBound == view.endIndex else {
            fail(HTTPExchangeError.proxyRefused(status: status), closing: context)
            return
        }
        settle(())
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    /// The status code of `HTTP/1.x NNN reason`, or 0.
    static func status(of line: String) -> Int {
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let code = Int(parts[1]) else { return 0 }
        return code
    }
}
