import AuthCore
import Foundation
import Synchronization
import Testing

/// A wall clock and a monotonic clock that answer from scripts, one value per read.
private final class ScriptedClocks: WallClock, MonotonicClock {
    private let walls: Mutex<[TimeInterval]>
    private let monotonics: Mutex<[TimeInterval]>

    init(wall: [TimeInterval], monotonic: [TimeInterval]) {
        walls = Mutex(wall)
        monotonics = Mutex(monotonic)
    }

    // A read past the script's end is recorded as a failure (and answers 0) instead of trapping.
    func now() -> Date { Date(timeIntervalSince1970: Self.next(walls, "wall")) }
    func seconds() -> TimeInterval { Self.next(monotonics, "monotonic") }

    private static func next(_ script: borrowing Mutex<[TimeInterval]>, _ clock: String) -> TimeInterval {
        guard let value = script.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
            Issue.record("the \(clock) clock was read more often than scripted")
            return 0
        }
        return value
    }
    func sleep(for seconds: TimeInterval) async throws {}

    /// Values the reading did not ask for.
    var unread: Int { walls.withLock { $0.count } + monotonics.withLock { $0.count } }
}

/// Both clocks are read at one moment, or the reading says so: a thread descheduled between two
/// reads is not a clock that was set.
@Suite struct ClockReadingTests {
    private let earlier = ClockReading(wall: Date(timeIntervalSince1970: 1000), monotonic: 50)

    @Test func aThreadDescheduledBetweenTheReadsIsNotAJump() {
        // 10 s after `earlier` the wall reads 1010; the thread is descheduled for 5 s before it
        // reads the monotonic clock (65). As a plain pair that is a wall clock set back 5 s ...
        #expect(ClockReading(wall: Date(timeIntervalSince1970: 1010), monotonic: 65).jump(since: earlier).isJump())
        // ... but the second wall read (1015) gives the gap away, and the next try is kept.
        let clocks = ScriptedClocks(wall: [1010, 1015, 1015.001, 1015.002], monotonic: [65, 65.0015])
        let reading = ClockReading(clocks, clocks)
        #expect(!reading.jump(since: earlier).isJump())
        #expect(abs(reading.jump(since: earlier).offset) < 0.01, "\(reading)")
        #expect(clocks.unread == 0)
    }

    @Test func aClockSetBetweenTheTwoWallReadsIsReadAgainAndStillAJump() {
        // Set forward an hour between the wall reads of the first try: the second try is clean,
        // and the jump it shows is the hour.
        let clocks = ScriptedClocks(wall: [1010, 4610, 4610, 4610], monotonic: [60, 60])
        let reading = ClockReading(clocks, clocks)
        #expect(reading == ClockReading(wall: Date(timeIntervalSince1970: 4610), monotonic: 60))
        #expect(reading.jump(since: earlier).offset == 3600)
        #expect(clocks.unread == 0)
    }

    @Test func aClockSetBackBetweenTheTwoWallReadsIsReadAgainToo() {
        // The second wall read comes before the first: a negative spread is no tighter.
        let clocks = ScriptedClocks(wall: [1010, 410, 410, 410.001], monotonic: [60, 60.0005])
        let reading = ClockReading(clocks, clocks)
        #expect(abs(reading.jump(since: earlier).offset - -600) < 0.01, "\(reading)")
        #expect(clocks.unread == 0)
    }

    @Test func whenEveryTryIsDescheduledTheClosestPairIsKept() {
        // Eight tries, none within `tightSpread`; the second (0.5 s apart) is the closest.
        let spreads: [TimeInterval] = [3, 0.5, 2, 2, 2, 2, 2, 1]
        #expect(spreads.count == ClockReading.attempts)
        var walls: [TimeInterval] = [], monotonics: [TimeInterval] = []
        for (index, spread) in spreads.enumerated() {
            let before: TimeInterval = 1000 + 10 * Double(index)
            walls += [before, before + spread]
            monotonics.append(50 + 10 * Double(index))
        }
        let clocks = ScriptedClocks(wall: walls, monotonic: monotonics)
        let reading = ClockReading(clocks, clocks)
        #expect(reading == ClockReading(wall: Date(timeIntervalSince1970: 1010.25), monotonic: 60))
        #expect(clocks.unread == 0)
    }
}
