import BlockingCalls
import Foundation
import Synchronization
import Testing

/// The one thread-of-its-own queue that the keyring store and the client library run blocking calls on.
@Suite struct BlockingLaneTests {
    @Test func jobsRunInOrderOnOneNamedThreadThatIsNotTheCallers() async throws {
        let lane = BlockingLane(name: "authd-lane-test-long-name")
        let order = Mutex<[Int]>([])
        for n in 0..<50 { lane.submit { order.withLock { $0.append(n) } } }
        let (name, thread) = await lane.run { () -> (String, UInt) in
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            return (name.trimmingCharacters(in: .whitespacesAndNewlines), UInt(bitPattern: Int(bitPattern: pthread_self())))
        }
        // Everything submitted before the `run` has run before it.
        #expect(order.withLock { $0 } == Array(0..<50))
        // The kernel keeps 15 bytes of a thread's name.
        #expect(name == "authd-lane-test")
        #expect(thread != UInt(bitPattern: Int(bitPattern: pthread_self())))
        let again = await lane.run { UInt(bitPattern: Int(bitPattern: pthread_self())) }
        #expect(again == thread)
    }

    @Test func aThrownErrorComesBackToTheCaller() async {
        struct Refused: Error, Equatable {}
        let lane = BlockingLane(name: "authd-lane-test")
        await #expect(throws: Refused()) { try await lane.run { () throws(Refused) -> Int in throw Refused() } }
        #expect(await lane.run { 42 } == 42)
    }
}
