import NIOCore

/// What the accept built for a served connection, handed to a task once the connection needs
/// one: the channel (reading, not yet wrapped for async use), its context (with the outbox its
/// pipeline already writes to) and the outbox's items, which the task sends.
struct ServedConnection: Sendable {
    let channel: any Channel
    let context: ConnectionContext
    let items: AsyncStream<Outbox.Item>
    /// The connection's slot, given back when it ends.
    let slot: SlotHold
}
