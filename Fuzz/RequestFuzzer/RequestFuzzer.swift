import AuthCore
import AuthDaemon
import AuthProtocol
import AuthSocketServer
import AuthTestSupport
import Foundation
import Logging

/// Feeds one input, as request lines, through the byte reader of token requests (checked against
/// the decoder) and the daemon's paths for a line, as the socket server takes them (a real
/// `RequestDispatcher` over a running `SessionDriver` with a fake server and an in-memory
/// keyring) and checks what came back: every line the daemon queued is one JSON object with
/// `"jsonrpc":"2.0"`, and a request with an id gets exactly one answer carrying that id.
/// A broken rule traps, which libFuzzer reports as a crash with the input that caused it. The
/// same input then goes through `NumericFuzzer`, as numbers.
enum RequestFuzzer {
    /// The daemon under test, started once per process: libFuzzer calls `run` millions of times.
    private static let world = FuzzWorld()

    static func run(_ input: Data) {
        // The line framing never hands the dispatcher a newline; the decoder sees what is between.
        for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) where line.count <= 64 * 1024 {
            checkTokenReader(line: Data(line))
            check(line: Data(line), answers: world.dispatch(Data(line)))
        }
        NumericFuzzer.run(input) { world.dispatch($0) }
    }

    /// The byte-by-byte reader of token requests (the event loop's fast path) agrees with the
    /// decoder on every line it accepts.
    private static func checkTokenReader(line: Data) {
        guard let read = TokenRequestLine(Array(line)) else { return }
        guard case .success(let envelope) = RPCCodec.decodeEnvelope(line), envelope.method == Methods.Token.name, envelope.id == read.id,
              let parameters = try? RPCCodec.decodeParams(Methods.Token.Parameters.self, from: envelope.raw),
              parameters.profile == read.parameters.profile, parameters.minValidity == read.parameters.minValidity else {
            fatalError("the token request reader read a line the decoder reads otherwise")
        }
    }

    /// Whether a JSON number is an id authd echoes: a whole number within 64 bits. Others (1.5,
    /// 1e30) are refused with an invalid-request error and a null id, so only the count is checked.
    private static func isWholeInt64(_ value: Any) -> Bool {
        // A JSON true/false is an NSNumber too, of type "c" (`is Bool` would also match 0 and 1).
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return false }
        let double = number.doubleValue
        return double == double.rounded() && abs(double) < 9.0e18
    }

    private static func check(line: Data, answers: [Data]) {
        var ids: [Any] = []
        var responses = 0
        for answer in answers {
            guard answer.last == UInt8(ascii: "\n"), !answer.dropLast().contains(UInt8(ascii: "\n")) else {
                fatalError("an answer is not exactly one line")
            }
            guard let object = (try? JSONSerialization.jsonObject(with: answer)) as? [String: Any], object["jsonrpc"] as? String == "2.0" else {
                fatalError("an answer is not a JSON-RPC 2.0 object")
            }
            guard (object["result"] == nil) != (object["error"] == nil) || object["method"] != nil else {
                fatalError("an answer has both or neither of result and error")
            }
            if object["method"] == nil { responses += 1 }
            if let id = object["id"] { ids.append(id) }
        }
        // Foundation's JSONSerialization drops a U+FEFF inside a member name ("\u{FEFF}id" reads
        // as "id"), while the daemon's decoder keeps the name as written: for such a line this
        // reference cannot tell a request from a notification, so only "at most one answer" holds.
        if line.range(of: Data([0xEF, 0xBB, 0xBF])) != nil {
            if responses > 1 { fatalError("a line with U+FEFF got \(responses) answers") }
            return
        }
        // A well-formed request with an id gets one answer, with that id. A member named twice
        // is ambiguous (JSON leaves it open which one counts), so then only the count is checked.
        if let request = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any],
           let id = request["id"], id is String || Self.isWholeInt64(id), request["method"] is String, request["jsonrpc"] as? String == "2.0" {
            let subscribe = request["method"] as? String == Methods.Subscribe.name
            if responses != 1, !(subscribe && responses == 0) {
                fatalError("request \(String(describing: id)) got \(responses) answers")
            }
            let unambiguous = String(decoding: line, as: UTF8.self).components(separatedBy: "\"id\"").count == 2
            if unambiguous, responses == 1, ids.filter({ ($0 as? NSObject)?.isEqual(id) == true }).count != 1 {
                fatalError("request \(String(describing: id)) was answered with another id")
            }
        }
    }
}

/// One daemon for the whole fuzzing process.
final class FuzzWorld: Sendable {
    private let dispatcher: RequestDispatcher
    private let connectionIDs = ManagedAtomicCounter()

    init() {
        var logger = Logger(label: "authd-fuzz")
        logger.logLevel = .critical
        let driver = SessionDriver(profile: "default", server: "https://example.test", store: InMemorySessionStore(), api: FakeGoTrue(),
                                   policy: RefreshPolicy(jitterFraction: 0), logger: logger)
        let profile = ProfileServices(session: driver)
        dispatcher = RequestDispatcher(registry: ProfileRegistry(profiles: [profile], defaultProfile: "default"), logger: logger)
        // The driver must run for token requests to be answered. It lives as long as the process:
        // libFuzzer owns the main thread and never returns to a structured scope we could use.
        Thread { Self.blockOn { await profile.run() } }.start()
    }

    /// Dispatches one line on a fresh connection the way the socket server does (the event
    /// loop's `answerAtOnce` first: an answer at once, a request read there and answered later,
    /// or the line to `handle`) and returns every line queued for it.
    func dispatch(_ line: Data) -> [Data] {
        let (items, continuation) = AsyncStream<Outbox.Item>.makeStream()
        let outbox = Outbox(continuation: continuation, limit: 1 << 20, finalLine: Data(), onOverflow: {})
        let context = ConnectionContext(id: connectionIDs.next(), peer: PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()),
                                        client: ClientIdentity(executable: "/usr/bin/fuzzed-client", appID: nil),
                                        outbox: outbox, activity: ConnectionActivity(now: 0))
        let dispatcher = self.dispatcher
        let immediate = line.withUnsafeBytes { dispatcher.answerAtOnce(line: $0, connection: context) }
        return Self.blockOn {
            switch immediate {
            case .reply(let answer): outbox.send(Data(answer))
            case .later(let work): await work()
            case .pass: await dispatcher.handle(line: line, connection: context)
            }
            await dispatcher.connectionClosed(context)
            outbox.finish()
            var lines: [Data] = []
            for await item in items where outbox.taken(item) {
                if case .line(let data) = item { lines.append(data) }
            }
            return lines
        }
    }

    /// Runs `body` to completion from synchronous code (libFuzzer's callback), on the
    /// cooperative pool, while this thread, which is not part of the pool, waits.
    static func blockOn<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        Task {
            result.value = await body()
            done.signal()
        }
        done.wait()
        return result.value!
    }
}

/// Carries a result from the task to the waiting thread; the semaphore orders the accesses.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    var value: T?
}
