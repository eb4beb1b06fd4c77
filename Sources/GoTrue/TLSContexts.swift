import NIOSSL
import Synchronization

/// One TLS client context per trust, kept for the life of the process.
///
/// Making a context reads the trust store, which is worth doing once rather than for every
/// request. A process meets one trust, or two at most, so this never grows past a couple of entries.
enum TLSContexts {
    private static let contexts = Mutex<[TLSTrust: NIOSSLContext]>([:])

    /// The context for servers whose certificates `trust` vouches for.
    static func context(for trust: TLSTrust) throws -> NIOSSLContext {
        try contexts.withLock { contexts in
            if let context = contexts[trust] { return context }
            let context = try NIOSSLContext(configuration: trust.clientConfiguration)
            contexts[trust] = context
            return context
        }
    }
}
