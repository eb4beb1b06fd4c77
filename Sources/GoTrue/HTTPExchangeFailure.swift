/// A failure of an exchange, and whether the request had been written when it happened.
struct HTTPExchangeFailure: Error {
    /// What went wrong: an `HTTPExchangeError`, or SwiftNIO's or NIOSSL's own error.
    var underlying: any Error
    /// Whether any of the request had been handed to the connection.
    var sent: Bool

    init(_ underlying: any Error, sent: Bool) {
        self.underlying = underlying
        self.sent = sent
    }
}

/// The exchange's own failures, beside SwiftNIO's and NIOSSL's.
enum HTTPExchangeError: Error, Equatable {
    /// The deadline passed.
    case timedOut
    /// The task waiting for the answer was cancelled.
    case cancelled
    /// The connection closed before a whole answer came.
    case connectionClosed
    /// The answer's body was larger than allowed.
    case answerTooLarge
    /// The HTTP proxy refused the tunnel with this status (0: its answer was not HTTP).
    case proxyRefused(status: Int)
    /// An https server named by its IP address cannot be checked through a proxy (its
    /// certificate would be compared with the proxy's address).
    case addressThroughProxy
}
