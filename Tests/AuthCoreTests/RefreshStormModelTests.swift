import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// The session machine driven by a simulated world: a server that answers refreshes after a
/// random latency with GoTrue's whole-second `expires_in` (sometimes a second short, as integer
/// `exp` rounding leaves it), a keyring that takes its time, clients asking for random minimum
/// validities (none, near the lifetime, exactly it, one under or over, far above), and a wall
/// clock that is set back and forth. Whatever happens, one token request causes at most one
/// refresh grant, every request is answered promptly, and no minute holds more refresh grants
/// than the breaker allows. No sleeping: time is a number the simulation advances.
@Suite struct RefreshStormModelTests {
    static let seeds: [UInt64] = Array(1...40)

    @Test(arguments: seeds)
    func noRequestCausesMoreThanOneRefreshAndNoMinuteExceedsTheLimit(_ seed: UInt64) {
        var world = SimulatedWorld(seed: seed)
        // Requests stop at 900 s; the rest lets the last ones be answered.
        world.run(until: 920)
        let context = "seed \(seed), lifetime \(world.lifetime) s, \(world.requests.count) requests"

        #expect(!world.requests.isEmpty)
        for request in world.requests {
            #expect(request.answeredAt != nil, "request #\(request.id) (min \(request.minimum), at \(request.askedAt)) was never answered; \(context)")
            #expect(request.refreshesWhileWaiting <= 1,
                    "request #\(request.id) (min \(request.minimum)) saw \(request.refreshesWhileWaiting) refresh grants; \(context)")
            if let answeredAt = request.answeredAt {
                // A refresh in flight plus the keyring write of its result, at the most.
                #expect(answeredAt - request.askedAt <= world.maxLatency + world.maxStoreTime + 0.001,
                        "request #\(request.id) waited \(answeredAt - request.askedAt) s; \(context)")
            }
        }
        let limit = world.policy.refreshLimit
        for (index, start) in world.refreshStarts.enumerated() {
            // (A millisecond off the window's end: the breaker counts on the wall clock, which the
            // simulation derives from real time in floating point.)
            let inMinute = world.refreshStarts[index...].prefix { $0 < start + world.policy.refreshLimitWindow - 0.001 }.count
            #expect(inMinute <= limit, "\(inMinute) refresh grants in the minute from t=\(start); \(context)")
        }
        // The session was never lost and kept being refreshed on its schedule.
        #expect(world.machine.session != nil, "\(context)")
        #expect(world.refreshStarts.count >= Int(900 / world.lifetime), "\(context)")
    }
}

/// A discrete-event simulation around one `SessionMachine`.
struct SimulatedWorld {
    struct Request {
        let id: UInt64
        let minimum: TimeInterval
        let askedAt: TimeInterval
        var answeredAt: TimeInterval?
        var refreshesWhileWaiting = 0
    }

    private enum Event {
        case request(minimum: TimeInterval)
        case refreshAnswered(generation: UInt64, expiresIn: Int)
        case refreshFailed(generation: UInt64, ServerFailure)
        case stored(generation: UInt64, failure: StoreFailure?)
        case clockSet(by: TimeInterval)
    }

    let policy = RefreshPolicy()
    let lifetime: TimeInterval
    let maxLatency: TimeInterval = 3
    let maxStoreTime: TimeInterval = 0.5
    private(set) var machine: SessionMachine
    private(set) var requests: [Request] = []
    /// Real (simulated) times at which refresh grants were sent.
    private(set) var refreshStarts: [TimeInterval] = []

    private var generator: SplitMix64
    /// Real time, from the simulation's start.
    private var time: TimeInterval = 0
    /// The wall clock's offset from real time (changed by `clockSet`).
    private var skew: TimeInterval = 0
    private var events: [(at: TimeInterval, order: Int, event: Event)] = []
    private var order = 0
    private var timer: Date?
    private var keyringFreeAt: TimeInterval = 0
    private var refreshNumber = 1
    private let epoch = Fixtures.t0

    init(seed: UInt64) {
        generator = SplitMix64(seed: seed)
        // Lifetimes from a minute to an hour, and the odd very short one.
        let lifetimes: [TimeInterval] = [60, 61, 90, 300, 600, 3600, 10, 30]
        lifetime = lifetimes[Int(generator.next() % UInt64(lifetimes.count))]
        machine = SessionMachine(policy: policy)
        let stored = Fixtures.session(1, receivedAt: epoch, lifetime: lifetime)
        apply(machine.storedSessionLoaded(stored, now: wall, random: unit()))
        var at: TimeInterval = 0
        while at < 900 {
            // Bursts and lulls: a client polling, a herd, a quiet spell.
            at += unit() < 0.2 ? unit() * 0.05 : unit() * 8
            schedule(at: at, .request(minimum: pickMinimum()))
        }
        for _ in 0..<3 {
            let offset = (unit() - 0.5) * 2 * lifetime
            schedule(at: unit() * 900, .clockSet(by: offset))
        }
    }

    private var wall: Date { epoch.addingTimeInterval(time + skew) }

    private mutating func unit() -> Double { Double(generator.next() >> 11) / Double(1 << 53) }

    private mutating func pickMinimum() -> TimeInterval {
        switch generator.next() % 8 {
        case 0: return 0
        case 1: return lifetime
        case 2: return lifetime - 1
        case 3: return lifetime + 1
        case 4: return 1e12
        case 5: return lifetime - unit() * 2
        default: return (unit() * lifetime).rounded()
        }
    }

    private mutating func schedule(at: TimeInterval, _ event: Event) {
        order += 1
        events.append((at, order, event))
    }

    mutating func run(until end: TimeInterval) {
        while true {
            let timerAt = timer.map { max(time, $0.timeIntervalSince(epoch) - skew) }
            guard let next = events.indices.min(by: { (events[$0].at, events[$0].order) < (events[$1].at, events[$1].order) }) else { break }
            if let timerAt, timerAt <= events[next].at {
                guard timerAt <= end else { break }
                time = timerAt
                timer = nil
                apply(machine.timerFired(now: wall))
                continue
            }
            let (at, _, event) = events.remove(at: next)
            guard at <= end else { break }
            time = max(time, at)
            handle(event)
        }
    }

    private mutating func handle(_ event: Event) {
        switch event {
        case .request(let minimum):
            let id = UInt64(requests.count + 1)
            requests.append(Request(id: id, minimum: minimum, askedAt: time))
            apply(machine.tokenRequested(RequestID(id), validFor: minimum, now: wall))
        case .refreshAnswered(let generation, let expiresIn):
            refreshNumber += 1
            let grant = Fixtures.grant(refreshNumber, lifetime: expiresIn)
            apply(machine.refreshSucceeded(grant, generation: generation, now: wall))
        case .refreshFailed(let generation, let failure):
            apply(machine.refreshFailed(failure, generation: generation, now: wall, random: unit()))
        case .stored(let generation, let failure):
            apply(machine.storeFinished(generation: generation, failure: failure, now: wall, random: unit()))
        case .clockSet(let offset):
            skew += offset
            apply(machine.clockJumped(by: offset, now: wall))
        }
    }

    private mutating func apply(_ actions: [SessionAction]) {
        for action in actions {
            switch action {
            case .refresh(_, let generation):
                refreshStarts.append(time)
                for index in requests.indices where requests[index].answeredAt == nil { requests[index].refreshesWhileWaiting += 1 }
                // GoTrue's expires_in is whole seconds; one computed from an integer exp may be a second short.
                let expiresIn = Int(lifetime) - (unit() < 0.5 ? 1 : 0)
                let answerAt = time + unit() * maxLatency
                switch unit() {
                case ..<0.05: schedule(at: answerAt, .refreshFailed(generation: generation, .unreachable(url: "https://x", detail: "no network")))
                case ..<0.1: schedule(at: answerAt, .refreshFailed(generation: generation, .http(status: 503, code: nil, message: "busy", retryAfter: nil)))
                default: schedule(at: answerAt, .refreshAnswered(generation: generation, expiresIn: expiresIn))
                }
            case .store(_, let generation):
                keyringFreeAt = max(time, keyringFreeAt) + unit() * maxStoreTime / 2
                schedule(at: keyringFreeAt, .stored(generation: generation, failure: unit() < 0.05 ? .timedOut : nil))
            case .answer(let id, _):
                let index = Int(id.raw) - 1
                if requests.indices.contains(index), requests[index].answeredAt == nil { requests[index].answeredAt = time }
            case .armTimer(let date):
                timer = date
            case .cancelTimer:
                timer = nil
            case .emit, .delete, .loadStore:
                break
            }
        }
    }
}
