import AuthConfig
import AuthCore
import Foundation

/// Feeds the numbers an input spells to every place a number from outside enters authd's rules:
/// a token request's minimum validity (read as a wire line, through the dispatcher, and as a
/// `Double` straight into the session machine), a grant's `expires_in`, a 429's `Retry-After`, a
/// stored session's dates, a clock step, and the configuration's `refresh_lead`. Nothing may trap
/// (libFuzzer reports a trap as a crash), and every integer that leaves for the wire stays within
/// the number's range.
enum NumericFuzzer {
    static func run(_ input: Data, dispatch: (Data) -> [Data]) {
        let numbers = Numbers(input)
        // As text, exactly as a client might write it: on the wire, and in the configuration.
        let text = numbers.text
        let line = #"{"jsonrpc":"2.0","id":7,"method":"session.token","params":{"min_validity":\#(text)}}"#
        _ = dispatch(Data(line.utf8))
        _ = try? DaemonConfiguration.parse("refresh_lead = \(text)\n[profiles.p]\nurl = \"https://p.test\"\nanon_key = \"k\"\n", source: "fuzz")

        // As values, straight into the rules.
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var machine = SessionMachine(policy: RefreshPolicy(fixedLead: RefreshLead.allowed.contains(numbers.double(1)) ? numbers.double(1) : nil))
        var stored = Session(accessToken: "a", refreshToken: "r", expiresAt: t0.addingTimeInterval(numbers.double(2)),
                             receivedAt: t0.addingTimeInterval(numbers.double(3)), user: UserSummary(id: "u"))
        stored = stored.plausible(at: t0)
        check(machine.storedSessionLoaded(stored, now: t0))
        check(machine.tokenRequested(RequestID(1), validFor: numbers.double(0), now: t0))
        check(machine.refreshFailed(.http(status: 429, code: nil, message: "slow down", retryAfter: numbers.double(4)),
                                    generation: machine.generation, now: t0, random: numbers.double(5)))
        check(machine.clockJumped(by: numbers.double(6), now: t0.addingTimeInterval(numbers.double(6))))
        check(machine.tokenRequested(RequestID(2), validFor: numbers.double(7), now: t0))
        let grant = SessionGrant(accessToken: "a2", refreshToken: "r2", expiresIn: numbers.integer(0), user: UserSummary(id: "u"))
        check(machine.refreshSucceeded(grant, generation: machine.generation, now: t0))
        check(machine.storeFinished(generation: machine.generation, failure: nil, now: t0))
        check(machine.timerFired(now: t0.addingTimeInterval(numbers.double(8))))
    }

    /// Every date the machine hands out becomes wire integers and timer deadlines: those
    /// conversions must hold for whatever date it is.
    private static func check(_ actions: [SessionAction]) {
        for action in actions {
            switch action {
            case .armTimer(let date): _ = Int64(saturating: date.timeIntervalSince1970)
            case .answer(_, .success(let token)): _ = Int64(saturating: token.expiresAt.timeIntervalSince1970, rounding: .down)
            case .answer(_, .failure(.minimumValidityTooLong(let requested, let lifetime))):
                _ = (Int64(saturating: requested), Int64(saturating: lifetime))
            default: break
            }
        }
    }

    /// The input read as numbers: eight-byte slices as `Double` bit patterns and as `Int`s, and
    /// the printable prefix as a number's text.
    struct Numbers {
        private let bytes: [UInt8]

        init(_ data: Data) { bytes = Array(data) }

        /// The input's leading characters that may appear in a JSON or TOML number (or spell
        /// inf and nan), or "0".
        var text: String {
            let allowed = Set("0123456789+-.eEinfa_".utf8)
            let prefix = bytes.prefix { allowed.contains($0) }.prefix(400)
            return prefix.isEmpty ? "0" : String(decoding: prefix, as: UTF8.self)
        }

        func double(_ slot: Int) -> Double { Double(bitPattern: word(slot)) }

        func integer(_ slot: Int) -> Int { Int(truncatingIfNeeded: word(slot)) }

        private func word(_ slot: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<8 {
                let position = slot * 8 + index
                value = value << 8 | UInt64(position < bytes.count ? bytes[position] : 0)
            }
            return value
        }
    }
}
