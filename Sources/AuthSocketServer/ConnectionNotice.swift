import AuthProtocol
import FoundationEssentials
import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The last line a connection gets before the daemon closes it: an error with a null id, so
/// clients can tell the user why instead of seeing a bare end of file.
enum ConnectionNotice {
    /// The peer runs as another user.
    static func refusal(uid: UInt32) -> Data {
        RPCCodec.encodeError(.application(.accessDenied, "access denied: authd serves only the user who runs it (uid \(getuid())), and this client runs as uid \(uid)"), id: nil)
    }

    /// Every connection slot is taken.
    static func busy(limit: Int) -> Data {
        RPCCodec.encodeError(.application(.busy, "authd is serving its maximum of \(limit) connections; close unused connections or try again"), id: nil)
    }

    /// The client's own share of the slots is taken.
    static func busyForClient(limit: Int) -> Data {
        RPCCodec.encodeError(.application(.busy, "this program has \(limit) connections to authd open already, its maximum; close unused ones or try again"), id: nil)
    }

    /// A request line passed the limit.
    static func lineTooLong(limit: Int) -> Data {
        RPCCodec.encodeError(RPCErrorObject(code: RPCErrorObject.invalidRequestCode,
                                            message: "request line longer than \(limit) bytes; closing the connection"), id: nil)
    }

    /// The connection was quiet for too long.
    static func idle(timeout: Duration) -> Data {
        let seconds = timeout.components.seconds
        let length = seconds > 0 ? "\(seconds) s" : "\(timeout.components.attoseconds / 1_000_000_000_000_000) ms"
        return RPCCodec.encodeError(.application(.idleTimeout, "no request for \(length); closing the connection (subscribed connections stay open)"), id: nil)
    }

    /// The notices every served connection may need, encoded once per server instead of at
    /// every accept, where JSON encoding would be a tenth of the cost of a new connection.
    struct Prepared: Sendable {
        /// `tooSlow` for the limits' queue size.
        let tooSlow: Data
        /// `idle` for the limits' timeout, when there is one.
        let idle: ByteBuffer?

        init(limits: ConnectionLimits) {
            tooSlow = ConnectionNotice.tooSlow(limit: limits.maxQueuedBytes)
            idle = limits.idleTimeout.map { ByteBuffer(bytes: ConnectionNotice.idle(timeout: $0)) }
        }
    }

    /// The client did not read its answers and events fast enough.
    static func tooSlow(limit: Int) -> Data {
        RPCCodec.encodeError(.application(.tooSlow, "more than \(limit) bytes of answers and events were waiting for this client to read them; closing the connection (reconnect and subscribe again)"), id: nil)
    }
}
