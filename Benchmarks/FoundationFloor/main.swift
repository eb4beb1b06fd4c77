// A floor for benchmark P4 (idle RSS): the least a Swift program costs that uses FoundationEssentials
// the way authd does (JSON both ways, dates), linked the same way as authd. It does that work once,
// prints "ready" and waits to be killed. The Swift runtime and FoundationEssentials are part of
// every figure authd can reach; this shows how much of it they are.
import FoundationEssentials
import Glibc

/// A record shaped like the session authd keeps, so the JSON coders do what they do in authd.
struct FloorRecord: Codable, Equatable {
    var accessToken: String
    var expiresAt: Date
    var scopes: [String]
}

let record = FloorRecord(accessToken: "not-a-token", expiresAt: Date(timeIntervalSinceNow: 3600), scopes: ["a", "b"])
let encoded = try JSONEncoder().encode(record)
let decoded = try JSONDecoder().decode(FloorRecord.self, from: encoded)
guard decoded == record else { fatalError("the JSON round trip changed the record") }
let ready = Array("ready\n".utf8)
_ = ready.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
while true { pause() }
