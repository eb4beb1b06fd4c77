import NIOCore

/// One inbound unit: a complete line, or the news that a line exceeded the limit.
public enum InboundFrame: Sendable {
    /// A line without its trailing newline.
    case line(ByteBuffer)
    /// A line grew past the limit; the connection cannot be resynchronised.
    case tooLong
    /// A request already read on the event loop (`ImmediateAnswer.later`): the work that
    /// answers it, run in the connection's task like a line.
    case call(@Sendable () async -> Void)
}

/// Splits the byte stream on `\n` and refuses lines longer than `maxLength` bytes
/// (without buffering more than that).
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = InboundFrame

    let maxLength: Int
    private var failed = false

    init(maxLength: Int) { self.maxLength = maxLength }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if failed {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        if let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - buffer.readerIndex
            if length > maxLength { return fail(context: context, buffer: &buffer) }
            var line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 1)
            if line.readableBytesView.last == UInt8(ascii: "\r") { line = line.getSlice(at: line.readerIndex, length: line.readableBytes - 1)! }
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        if buffer.readableBytes > maxLength { return fail(context: context, buffer: &buffer) }
        return .needMoreData
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A final line without a newline is still a request.
        while try decode(context: context, buffer: &buffer) == .continue {}
        if !failed, buffer.readableBytes > 0, let rest = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(.line(rest)))
        }
        return .needMoreData
    }

    private mutating func fail(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
        failed = true
        buffer.moveReaderIndex(to: buffer.writerIndex)
        context.fireChannelRead(wrapInboundOut(.tooLong))
        return .needMoreData
    }
}
