import AuthSocketServer
import Foundation
import Logging
import Synchronization
import Testing

/// Without `SO_PEERPIDFD` authd says once at start that the pid-reuse check is off.
@Suite struct PeerPidfdSupportTests {
    /// Keeps every line logged through it, with its level.
    final class Lines: LogHandler, Sendable {
        let kept = Mutex<[(Logger.Level, String)]>([])
        var metadata: Logger.Metadata { get { [:] } set {} }
        var logLevel: Logger.Level { get { .trace } set {} }
        subscript(metadataKey key: String) -> Logger.Metadata.Value? { get { nil } set {} }
        func log(event: LogEvent) {
            kept.withLock { $0.append((event.level, event.message.description)) }
        }
    }

    @Test func anOldKernelGetsOneNoticeAndANewOneNothing() {
        let lines = Lines()
        let logger = Logger(label: "authd-test") { _ in lines }
        PeerPidfdSupport.logAtStart(logger, available: true)
        #expect(lines.kept.withLock { $0.isEmpty })
        PeerPidfdSupport.logAtStart(logger, available: false)
        let kept = lines.kept.withLock { $0 }
        #expect(kept.count == 1)
        #expect(kept.first?.0 == .notice)
        #expect(kept.first?.1.contains("SO_PEERPIDFD") == true && kept.first?.1.contains("is off") == true)
    }

    /// The probe agrees with the kernel this runs on: Linux 6.5 brought the option.
    @Test func theProbeMatchesTheKernelsVersion() throws {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        try #require(numbers.count == 2, "kernel release \(release)")
        let hasOption = (numbers[0], numbers[1]) >= (6, 5)
        #expect(PeerPidfdSupport.probe() == hasOption, "kernel release \(release)")
    }
}
