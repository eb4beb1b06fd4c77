import Synchronization

/// How many event subscriptions each client holds, bounded per client: a subscribed connection
/// is never closed for being idle, so without a bound one app could hold every connection slot
/// open and leave the others `busy`.
final class SubscriptionQuota: Sendable {
    private let limit: Int
    private let held = Mutex<(byClient: [String: Int], byConnection: [UInt64: [String]])>(([:], [:]))

    init(limit: Int) { self.limit = limit }

    /// Takes one subscription for `client` on connection `connection`; false when the client
    /// holds `limit` already.
    func take(client: String, connection: UInt64) -> Bool {
        held.withLock { held in
            guard held.byClient[client, default: 0] < limit else { return false }
            held.byClient[client, default: 0] += 1
            held.byConnection[connection, default: []].append(client)
            return true
        }
    }

    /// Gives back every subscription of `connection` (it closed).
    func release(connection: UInt64) {
        held.withLock { held in
            for client in held.byConnection.removeValue(forKey: connection) ?? [] {
                held.byClient[client, default: 1] -= 1
                if held.byClient[client] == 0 { held.byClient[client] = nil }
            }
        }
    }
}
