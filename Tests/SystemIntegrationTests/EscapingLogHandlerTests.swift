import Logging
import Synchronization
import SystemIntegration
import Testing

/// The plain lines of a daemon started by hand: swift-log's StreamLogHandler behind
/// `EscapingLogHandler`, as authd bootstraps it when stderr is not the journal.
@Suite struct EscapingLogHandlerTests {
    /// Collects what the stream handler writes.
    final class Captured: TextOutputStream, Sendable {
        private let text = Mutex("")
        var value: String { text.withLock { $0 } }
        func write(_ string: String) { text.withLock { $0 += string } }
    }

    /// An error whose description a client chose.
    struct HostileError: Error, CustomStringConvertible {
        var description: String { "bad\n<0>forged\u{1B}[2J" }
    }

    private func logger(into captured: Captured, provider: Logger.MetadataProvider? = nil) -> Logger {
        Logger(label: "authd") { label in
            var handler = StreamLogHandler(label: label, stream: captured, metadataProvider: provider)
            handler.logLevel = .trace
            return EscapingLogHandler(wrapping: handler)
        }
    }

    @Test func aHostilePathStaysInsideOneLineAndColoursNothing() {
        let captured = Captured()
        var logger = logger(into: captured, provider: Logger.MetadataProvider { ["provided": "p\r\u{9B}"] })
        logger[metadataKey: "handler.tag"] = "t\u{1B}]0;title\u{7}"
        logger.notice("an app waits\nfor access \u{1B}[31m", metadata: ["client.app": "/tmp/x\nPRIORITY=0\nMESSAGE=forged\u{1B}[31m\u{202E}"])
        logger.error("could not remember", error: HostileError())
        let output = captured.value
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines.last == "", "\(output.debugDescription)")
        #expect(output.unicodeScalars.allSatisfy { $0 == "\n" || (0x20...0x7E).contains($0.value) }, "\(output.debugDescription)")
        let first = String(lines[0])
        #expect(first.contains(#"client.app=/tmp/x\nPRIORITY=0\nMESSAGE=forged\x1b[31m\u202e"#), "\(first)")
        #expect(first.contains(#"handler.tag=t\x1b]0;title\x07"#) && first.contains(#"provided=p\r\u009b"#), "\(first)")
        #expect(first.hasSuffix(#"an app waits\nfor access \x1b[31m"#), "\(first)")
        #expect(first.contains(" notice authd:"))
        let second = String(lines[1])
        #expect(second.contains(#"error.message=bad\n<0>forged\x1b[2J"#), "\(second)")
        #expect(second.contains("error.type=") && second.hasSuffix("could not remember"), "\(second)")
    }

    @Test func theLevelAndMetadataStillWork() {
        let captured = Captured()
        var logger = logger(into: captured)
        logger.logLevel = .warning
        logger.info("hidden")
        logger.warning("shown", metadata: ["n": "1"])
        logger[metadataKey: "k"] = "v"
        #expect(logger[metadataKey: "k"] == "v")
        logger.warning("with handler metadata")
        let lines = captured.value.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.contains("warning authd: n=1 [SystemIntegrationTests] shown") == true, "\(lines)")
        #expect(lines.last?.contains("warning authd: k=v [SystemIntegrationTests] with handler metadata") == true, "\(lines)")
    }
}
