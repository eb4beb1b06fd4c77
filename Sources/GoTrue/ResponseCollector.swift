import FoundationEssentials
import NIOCore
import NIOHTTP1

/// Collects one answer: its head and a body of at most `limit` bytes.
final class ResponseCollector: StageHandler {
    typealias InboundIn = HTTPClientResponsePart

    let outcome: EventLoopPromise<HTTPExchange.Response>
    var isSettled = false
    private let limit: Int
    private var head: HTTPResponseHead?
    private var body = ByteBuffer()

    init(limit: Int, answered: EventLoopPromise<HTTPExchange.Response>) {
        self.limit = limit
        self.outcome = answered
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isSettled else { return }
        switch unwrapInboundIn(data) {
        case .head(let received):
            // The decoder drops informational answers but 101, after which it reads no more:
            // any head is the answer.
            head = received
        case .body(var chunk):
            guard body.readableBytes + chunk.readableBytes <= limit else {
                fail(HTTPExchangeError.answerTooLarge, closing: context)
                return
            }
            body.writeBuffer(&chunk)
        case .end:
            guard let head else { return }
            settle(HTTPExchange.Response(status: Int(head.status.code), headers: head.headers, body: Data(body.readableBytesView)))
            context.close(promise: nil)
        }
    }
}
