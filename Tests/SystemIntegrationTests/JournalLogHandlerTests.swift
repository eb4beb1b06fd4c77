import AuthTestSupport
import Foundation
import Logging
@testable import SystemIntegration
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Journal priorities, telling the journal's stream from any other stderr, and lines that a
/// client-chosen value cannot split into entries of its own.
@Suite struct JournalLogHandlerTests {
    /// A path a client can give its executable: a line break, the journal's fields, a priority
    /// prefix, a NUL (also a line end to journald), colours, a C1 CSI and a bidi override.
    static let hostilePath = "/tmp/x\nPRIORITY=0\nMESSAGE=forged\n<0>forged too\0<2>and this\u{1B}[31mred\u{9B}2J\u{202E}"

    static func event(_ message: Logger.Message, _ metadata: Logger.Metadata) -> LogEvent {
        LogEvent(level: .notice, message: message, metadata: metadata, source: "test", file: #fileID, function: #function, line: #line)
    }

    @Test func aHostilePathStaysInsideOneLine() {
        var handler = JournalLogHandler(label: "authd", level: .info)
        handler[metadataKey: "handler.tag"] = "\u{1B}]0;title\u{7}"
        let line = handler.line(for: Self.event("an app waits\nfor access", ["client.app": "\(Self.hostilePath)", "session.profile": "work"]))
        #expect(line.hasPrefix("<5>authd: an app waits\\nfor access "), "\(line.debugDescription)")
        #expect(line.hasSuffix("\n") && line.filter { $0 == "\n" }.count == 1, "\(line.debugDescription)")
        // Nothing but printable ASCII (the input had no other non-ASCII) before the one newline.
        #expect(line.dropLast().unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }, "\(line.debugDescription)")
        #expect(line.contains(#"client.app=/tmp/x\nPRIORITY=0\nMESSAGE=forged\n<0>forged too\x00<2>and this\x1b[31mred\u009b2J\u202e"#), "\(line.debugDescription)")
        #expect(line.contains(#"handler.tag=\x1b]0;title\x07"#))
    }

    /// The programs the real-journal test runs, or nil where one is missing.
    static let journalTools: (journald: String, cat: String, journalctl: String, unshare: String)? = {
        let fileManager = FileManager.default
        func find(_ candidates: [String]) -> String? { candidates.first { fileManager.isExecutableFile(atPath: $0) } }
        guard let journald = find(["/lib/systemd/systemd-journald", "/usr/lib/systemd/systemd-journald"]),
              let cat = find(["/usr/bin/systemd-cat", "/bin/systemd-cat"]),
              let journalctl = find(["/usr/bin/journalctl", "/bin/journalctl"]),
              let unshare = find(["/usr/bin/unshare", "/bin/unshare"]) else { return nil }
        return (journald, cat, journalctl, unshare)
    }()

    /// Starts a systemd-journald of its own in a private mount namespace (a fresh /run and
    /// journal directory, so the machine's journal is not touched), feeds it the file named by
    /// $1 through systemd-cat with level prefixes, as a unit's stderr would, and writes the
    /// entries tagged $2 as JSON to the file $3 once the one with the message $4 is there.
    static let journalScript = #"""
        set -e
        mount -t tmpfs tmpfs /run
        if [ -d /var/log/journal ]; then mount -t tmpfs tmpfs /var/log/journal; fi
        SYSTEMD_LOG_TARGET=console "$JOURNALD" 2>"$3.journald" &
        journald=$!
        # SIGKILL: journald inherits the blocked signals of the test's thread.
        trap 'kill -9 $journald' EXIT
        for i in $(seq 200); do [ -S /run/systemd/journal/stdout ] && break; sleep 0.05; done
        "$CAT" --level-prefix=true -t "$2" <"$1"
        for i in $(seq 200); do
            "$JOURNALCTL" -m -t "$2" -o json --no-pager >"$3" 2>/dev/null || true
            grep -q "$4" "$3" && exit 0
            sleep 0.05
        done
        echo "the journal never showed the last line" >&2
        exit 1
        """#

    @Test(.enabled(if: getuid() == 0 && Self.journalTools != nil,
                   "needs root (a private mount namespace) and systemd-journald, systemd-cat, journalctl, unshare"))
    func theRealJournalMakesOneEntryOfEachLine() async throws {
        try await offPool {
            let tools = try #require(Self.journalTools)
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-journal-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let lines = directory.appendingPathComponent("lines"), entries = directory.appendingPathComponent("entries.json")
            _ = FileManager.default.createFile(atPath: lines.path, contents: nil)

            // The handler's own log(event:), writing to a file instead of stderr.
            let output = open(lines.path, O_WRONLY | O_CLOEXEC)
            try #require(output >= 0)
            let handler = JournalLogHandler(label: "authd", level: .info, output: output)
            handler.log(event: Self.event("an app waits for access", ["client.app": "\(Self.hostilePath)", "session.profile": "work"]))
            handler.log(event: Self.event("last line", [:]))
            close(output)

            let tag = "authd-test-\(UUID().uuidString.prefix(8))"
            let ran = try runToEnd(tools.unshare, ["--mount", "--propagation", "private", "/bin/sh", "-c", Self.journalScript, "sh",
                                                         lines.path, tag, entries.path, "last line"],
                                         environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "JOURNALD": tools.journald,
                                                       "CAT": tools.cat, "JOURNALCTL": tools.journalctl])
            let journald = (try? String(contentsOf: URL(fileURLWithPath: entries.path + ".journald"), encoding: .utf8)) ?? ""
            #expect(ran.status == 0, "\(ran.stderr) journald: \(journald)")

            let text = try String(contentsOf: entries, encoding: .utf8)
            let found = try text.split(separator: "\n").map { line -> (priority: String, message: String) in
                let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                // journalctl prints a message that is not valid text as an array of bytes.
                return (entry["PRIORITY"] as? String ?? "?", entry["MESSAGE"] as? String ?? "(not text: \(entry["MESSAGE"] ?? "none"))")
            }
            #expect(found.count == 2, "\(found)")
            #expect(found.allSatisfy { $0.priority == "5" }, "\(found)")
            #expect(found.first?.message == #"authd: an app waits for access client.app=/tmp/x\nPRIORITY=0\nMESSAGE=forged\n<0>forged too\x00<2>and this\x1b[31mred\u009b2J\u202e session.profile=work"#,
                    "\(found)")
            #expect(found.last?.message == "authd: last line")
        }
    }

    @Test func levelsMapToSyslogPriorities() {
        let expected: [(Logger.Level, Int)] = [(.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2)]
        for (level, priority) in expected { #expect(JournalLogHandler.priority(of: level) == priority) }
    }

    @Test func stderrIsTheJournalOnlyWhenJournalStreamNamesIt() {
        var info = stat()
        #expect(fstat(STDERR_FILENO, &info) == 0)
        let ours = "\(info.st_dev):\(info.st_ino)"
        #expect(JournalLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": ours]))
        // A daemon started from a shell inside a unit inherits the variable but not the stream.
        #expect(!JournalLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino &+ 1)"]))
        #expect(!JournalLogHandler.stderrIsJournal(environment: [:]))
        #expect(!JournalLogHandler.stderrIsJournal(environment: ["JOURNAL_STREAM": "garbage"]))
    }
}
