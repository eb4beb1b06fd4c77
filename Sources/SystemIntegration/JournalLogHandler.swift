import FoundationEssentials
import FoundationGaps
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Writes log lines to stderr with the `<N>` syslog-priority prefix the journal reads from a
/// service's stream, and without a timestamp (the journal adds its own).
///
/// The journal makes an entry of every line (ended by a newline or a NUL) and takes a `<N>` at
/// its start for the priority, so the message and the metadata are escaped (`LogEscaping`): a
/// client-chosen value such as an executable's path cannot add an entry of its own.
public struct JournalLogHandler: LogHandler {
    /// The minimum level logged.
    public var logLevel: Logger.Level
    /// Metadata attached to every line.
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let output: Int32

    /// Creates a handler for `label`.
    public init(label: String, level: Logger.Level) {
        self.init(label: label, level: level, output: STDERR_FILENO)
    }

    /// Creates a handler that writes to the descriptor `output` instead of stderr (for tests).
    init(label: String, level: Logger.Level, output: Int32) {
        self.label = label
        self.logLevel = level
        self.output = output
    }

    /// Whether stderr is the journal stream systemd connected (`$JOURNAL_STREAM` names its
    /// device and inode), so that a daemon started by hand from a unit's shell keeps plain lines.
    public static func stderrIsJournal(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// The syslog priority of `level`.
    public static func priority(of level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// Metadata by key.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line.
    public func log(event: LogEvent) {
        // One write per line: lines from several threads never interleave.
        StandardStreams.write(Array(line(for: event).utf8), to: output)
    }

    /// The line `log(event:)` writes: one journal entry, whatever the message and metadata hold.
    func line(for event: LogEvent) -> String {
        let merged = LogEscaping.escape(metadata.merging(event.metadata ?? [:]) { _, new in new })
        let fields = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "<\(Self.priority(of: event.level))>\(LogEscaping.escape(label)): \(LogEscaping.escape(event.message.description))\(fields)\n"
    }
}
