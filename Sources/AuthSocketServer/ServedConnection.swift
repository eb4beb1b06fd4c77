import NIOCore

/// What the accept built for a served connection, handed to a task once the connection needs
/// one: the channel (reading, not yet wrapped for async use), its context (with the outbox its
/// pipeline already writes to) and the outbox's items, which the task sends.
struct ServedConnection: Sendable {
    /// The connection, reading, its pipeline built.
    let channel: any Channel
    /// Who is connected, and the outbox its answers go to.
    let context: ConnectionContext
    /// What the outbox has queued, for the task to write in order.
    let items: AsyncStream<Outbox.Item>
    /// The connection's slot, given back when it ends.
    let slot: SlotHold
}
