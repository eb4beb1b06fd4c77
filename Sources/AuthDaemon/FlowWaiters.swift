/// The requests waiting for flows to finish (browser sign-ins, sign-in pages), by request, each
/// to be answered once with an `Answer`. Kept behind a lock by its owner, so that a cancelled
/// request is answered at once from its cancellation handler.
struct FlowWaiters<Answer: Sendable>: Sendable {
    typealias Waiter = CheckedContinuation<Answer, Never>

    private enum Entry {
        /// Registered; its continuation is attached a moment later.
        case registered(flow: String)
        /// Waiting for the flow to finish.
        case waiting(flow: String, Waiter)
        /// Cancelled before its continuation was attached.
        case cancelled
    }

    private var entries: [UInt64: Entry] = [:]
    private var nextID: UInt64 = 0

    /// A new waiter for `flow`; returns its id.
    mutating func register(_ flow: String) -> UInt64 {
        nextID += 1
        entries[nextID] = .registered(flow: flow)
        return nextID
    }

    /// Attaches the continuation of waiter `id`; true when it was cancelled meanwhile and must
    /// be answered at once.
    mutating func attach(_ waiter: Waiter, to id: UInt64) -> Bool {
        guard case .registered(let flow)? = entries[id] else {
            entries[id] = nil
            return true
        }
        entries[id] = .waiting(flow: flow, waiter)
        return false
    }

    /// Cancels waiter `id`: its continuation to answer now, if attached.
    mutating func cancel(_ id: UInt64) -> Waiter? {
        switch entries[id] {
        case .waiting(_, let waiter)?:
            entries[id] = nil
            return waiter
        case .registered?:
            entries[id] = .cancelled
            return nil
        case .cancelled?, nil:
            return nil
        }
    }

    /// Whether anyone waits for `flow`.
    func hasWaiters(for flow: String) -> Bool {
        entries.values.contains { entry in
            switch entry {
            case .registered(let waited), .waiting(let waited, _): return waited == flow
            case .cancelled: return false
            }
        }
    }

    /// Takes every continuation waiting for `flow`, to answer them.
    mutating func take(_ flow: String) -> [Waiter] {
        var taken: [Waiter] = []
        for (id, entry) in entries {
            if case .waiting(let waited, let waiter) = entry, waited == flow {
                taken.append(waiter)
                entries[id] = nil
            }
        }
        return taken
    }

    /// Takes every continuation still waiting, whatever its flow, to answer them (the owner stops).
    mutating func takeAll() -> [Waiter] {
        var taken: [Waiter] = []
        for (id, entry) in entries {
            if case .waiting(_, let waiter) = entry { taken.append(waiter) }
            entries[id] = nil
        }
        return taken
    }
}
