import Logging

/// Makes text safe to put in one log line: a newline in a value a client chose (the path of an
/// executable is whatever its owner named it) would start a line of its own, which the journal
/// takes for a new entry with the priority its `<N>` prefix names; an escape sequence would
/// drive the terminal that shows the log.
///
/// Escaped: the backslash itself (so that `\n` in the output is always an escape), newline,
/// carriage return and tab as `\n`, `\r`, `\t`; every other C0 control and DEL as `\xNN` (ESC is
/// `\x1b`); the C1 controls, the line and paragraph separators and the bidirectional formatting
/// characters (which can make a line read backwards) as `\uNNNN`. Everything else, other
/// non-ASCII text included, is kept.
public enum LogEscaping {
    /// The most characters one escaped message or value keeps; the rest becomes `…`. journald
    /// cuts a stream line longer than its `LineMax=` (48 KiB by default) and reads a priority
    /// prefix at the start of the next piece, so no client-chosen text may be that long.
    public static let limit = 2048

    /// `text` escaped, and cut to `limit` characters.
    public static func escape(_ text: String, limit: Int = limit) -> String {
        var escaped = ""
        escaped.reserveCapacity(min(text.utf8.count, limit) + 4)
        var length = 0
        for scalar in text.unicodeScalars {
            let replacement = self.replacement(for: scalar)
            let added = replacement?.unicodeScalars.count ?? 1
            guard length + added <= limit else {
                escaped += "…"
                break
            }
            if let replacement { escaped += replacement } else { escaped.unicodeScalars.append(scalar) }
            length += added
        }
        return escaped
    }

    /// Every key and value of `metadata` escaped; values become their escaped text (nested
    /// lists and dictionaries print as Swift prints them, with their parts escaped).
    public static func escape(_ metadata: Logger.Metadata) -> Logger.Metadata {
        var escaped: Logger.Metadata = [:]
        for (key, value) in metadata { escaped[escape(key)] = .string(escape("\(value)")) }
        return escaped
    }

    /// What stands for `scalar` in a log line, or nil when it stands for itself.
    private static func replacement(for scalar: Unicode.Scalar) -> String? {
        switch scalar.value {
        case 0x5C: return "\\\\"
        case 0x0A: return "\\n"
        case 0x0D: return "\\r"
        case 0x09: return "\\t"
        case 0x00...0x1F, 0x7F: return "\\x" + hex(scalar.value, digits: 2)
        // C1 controls; line and paragraph separators; bidirectional marks, embeddings,
        // overrides and isolates.
        case 0x80...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            return "\\u" + hex(scalar.value, digits: 4)
        default: return nil
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
