import AuthProtocol
import FoundationEssentials

/// An event as every subscriber of a profile gets it: the message, and its JSON-RPC notification
/// line, encoded once for all of them rather than once per subscriber.
public struct PublishedEvent: Sendable {
    /// The event.
    public let message: AuthEventMessage
    /// The notification line to send; nil only if it could not be encoded.
    public let line: Data?

    /// Encodes `message` once.
    init(_ message: AuthEventMessage) {
        self.message = message
        line = try? RPCCodec.encodeNotification(RPCNotification(method: AuthEventMessage.method, params: message))
    }
}
