/// Text that came from outside authctl (the server, the daemon, a browser callback) made safe
/// to print on a terminal.
///
/// A terminal acts on control characters: ESC starts CSI and OSC sequences that move the cursor,
/// clear the screen, set the window title or, on some terminals, write to the clipboard or make
/// links; C1 characters (U+0080–U+009F) are the same controls in one character. So a user name or
/// an error text chosen by whoever runs the server, or by a page that redirected the browser,
/// could rewrite what authctl shows. Every such character is shown as a visible escape instead:
/// `\x1b` for C0 and DEL, `\u{9b}` for C1.
enum TerminalText {
    /// `text` with every control character escaped, line breaks included: for one line, or for
    /// a field inside a line.
    static func escaped(_ text: String) -> String {
        escape(text, keepingLineBreaks: false)
    }

    /// `text` with every control character escaped but `\n`: for a message whose line breaks are
    /// authctl's own.
    static func escapedKeepingLineBreaks(_ text: String) -> String {
        escape(text, keepingLineBreaks: true)
    }

    /// Whether `scalar` is a control character a terminal may act on: C0, DEL or C1.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || bidiAndSeparators.contains(scalar.value)
    }

    /// The bidirectional controls (which can make a terminal show text in another order than it
    /// is, e.g. a path read backwards) and the line and paragraph separators, as the log escaping
    /// treats them.
    private static let bidiAndSeparators: Set<UInt32> = [0x061C, 0x200E, 0x200F, 0x2028, 0x2029,
                                                        0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]

    /// Encoded JSON with DEL, the C1 characters, the bidirectional controls and the line and
    /// paragraph separators written as `\uXXXX`. JSON encoders escape C0 only, since JSON allows
    /// the others raw; the result means the same to a reader and shows nothing a terminal acts
    /// on. (Those characters only occur inside strings: everything else in JSON is ASCII.)
    static func escapedJSON(_ json: [UInt8]) -> [UInt8] {
        let text = String(decoding: json, as: UTF8.self)
        guard text.unicodeScalars.contains(where: isControl) else { return json }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isControl(scalar), scalar.value >= 0x20 else {
                result.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
        }
        return Array(String(result).utf8)
    }

    private static func escape(_ text: String, keepingLineBreaks: Bool) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if !isControl(scalar) || (keepingLineBreaks && scalar == "\n") {
                result.append(scalar)
                continue
            }
            let hex = String(scalar.value, radix: 16)
            let shown = scalar.value < 0x80 ? "\\x" + (hex.count == 1 ? "0" : "") + hex : "\\u{" + hex + "}"
            result.append(contentsOf: shown.unicodeScalars)
        }
        return String(result)
    }
}

extension String {
    /// This text with every control character escaped (see `TerminalText`), for a field that came
    /// from outside authctl.
    var escapedForTerminal: String { TerminalText.escaped(self) }
}
