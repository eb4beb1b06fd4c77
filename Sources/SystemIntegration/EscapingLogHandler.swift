import Logging

/// Hands log events on to another handler with the message, the metadata (the handler's own,
/// its provider's and the event's) and an attached error escaped by `LogEscaping`, so that a
/// value a client chose can neither start a line of its own nor drive a terminal. Wraps the
/// plain `StreamLogHandler` of a daemon started by hand; `JournalLogHandler` escapes by itself.
public struct EscapingLogHandler<Inner: LogHandler>: LogHandler {
    private var inner: Inner

    /// Metadata attached to every event; escaped when logged.
    public var metadata: Logger.Metadata
    /// Metadata providers' values are escaped with the rest, so the inner handler gets none.
    public var metadataProvider: Logger.MetadataProvider?

    /// The inner handler's level.
    public var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    /// Wraps `inner`, taking over its metadata and metadata provider (which it would print
    /// unescaped).
    public init(wrapping inner: Inner) {
        var inner = inner
        metadata = inner.metadata
        metadataProvider = inner.metadataProvider
        inner.metadata = [:]
        if inner.metadataProvider != nil { inner.metadataProvider = nil }
        self.inner = inner
    }

    /// Metadata by key.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Escapes the event and passes it on.
    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        // The same keys StreamLogHandler would print an error under, escaped like the rest.
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var escaped = event
        escaped.message = "\(LogEscaping.escape(event.message.description))"
        escaped.metadata = merged.isEmpty ? nil : LogEscaping.escape(merged)
        escaped.error = nil
        escaped.source = LogEscaping.escape(event.source)
        inner.log(event: escaped)
    }
}
