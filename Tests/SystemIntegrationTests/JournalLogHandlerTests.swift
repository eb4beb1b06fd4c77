import Foundation
import Logging
import SystemIntegration
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Journal priorities, and telling the journal's stream from any other stderr.
@Suite struct JournalLogHandlerTests {
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
