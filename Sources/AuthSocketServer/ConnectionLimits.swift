/// The bounds that keep one broken or hostile client from hurting the others.
public struct ConnectionLimits: Sendable, Equatable {
    /// The longest request line in bytes; a longer one gets an error and the connection is closed.
    public var maxLineLength: Int
    /// Connections served at once; one more gets a `busy` error and is closed.
    public var maxConnections: Int
    /// Connections served at once for one client (one executable, or one sandboxed app): a
    /// buggy app cannot take every slot, subscribed connections (which are never idle-closed)
    /// included. At most `maxConnections`. Not a bound on a hostile program of the user, which
    /// can run copies of itself under other names.
    public var maxConnectionsPerClient: Int
    /// A connection that sends nothing for this long, has no request in flight and is not
    /// subscribed to events is closed with an `idle_timeout` notice. Nil: never.
    public var idleTimeout: Duration?
    /// Bytes queued for one connection and not yet taken by the kernel. A client that reads slower
    /// than its events arrive passes this, gets a final `too_slow` error and is dropped.
    public var maxQueuedBytes: Int
    /// How long a dropped client has to read its final error before the connection is cut.
    public var dropGrace: Duration

    /// Creates limits; the defaults suit a desktop (thousands of clients, a minute of silence).
    public init(maxLineLength: Int = 64 * 1024, maxConnections: Int = 4096, maxConnectionsPerClient: Int = 2048,
                idleTimeout: Duration? = .seconds(60),
                maxQueuedBytes: Int = 1 << 20, dropGrace: Duration = .seconds(2)) {
        self.maxLineLength = maxLineLength
        self.maxConnections = maxConnections
        self.maxConnectionsPerClient = min(maxConnectionsPerClient, maxConnections)
        self.idleTimeout = idleTimeout
        self.maxQueuedBytes = maxQueuedBytes
        self.dropGrace = dropGrace
    }
}
