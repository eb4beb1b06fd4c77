import Synchronization

/// The connection slots in use, bounded by `ConnectionLimits.maxConnections` in all and by
/// `maxConnectionsPerClient` for each client.
final class ConnectionSlots: Sendable {
    private let inUse = Mutex<(total: Int, byClient: [String: Int])>((0, [:]))
    private let limit: Int
    private let perClient: Int

    /// Whether a slot was taken.
    enum Outcome: Equatable {
        case taken
        /// Every slot is in use.
        case allTaken
        /// The client holds its share already.
        case clientsShareTaken
    }

    init(limit: Int, perClient: Int) {
        self.limit = limit
        self.perClient = perClient
    }

    /// Takes a slot for `client` (nothing is taken unless it says `taken`).
    func take(for client: String) -> Outcome {
        inUse.withLock { inUse in
            guard inUse.total < limit else { return .allTaken }
            guard inUse.byClient[client, default: 0] < perClient else { return .clientsShareTaken }
            inUse.total += 1
            inUse.byClient[client, default: 0] += 1
            return .taken
        }
    }

    /// Gives `client`'s slot back.
    func release(for client: String) {
        inUse.withLock { inUse in
            inUse.total -= 1
            inUse.byClient[client, default: 1] -= 1
            if inUse.byClient[client] == 0 { inUse.byClient[client] = nil }
        }
    }
}
