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
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Encoded JSON with DEL and the C1 characters written as `\u007f` … `\u009f`. JSON encoders
    /// escape C0 only, since JSON allows the others raw; the result means the same to a reader
    /// and shows nothing a terminal acts on. (Those bytes only occur inside strings: everything
    /// else in JSON is ASCII, and 0xC2 is never a continuation byte in UTF-8.)
    static func escapedJSON(_ json: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(json.count)
        var index = 0
        while index < json.count {
            let byte = json[index]
            if byte == 0x7F {
                result += Array("\\u007f".utf8)
            } else if byte == 0xC2, index + 1 < json.count, (0x80...0x9F).contains(json[index + 1]) {
                result += Array("\\u00\(String(json[index + 1], radix: 16))".utf8)
                index += 1
            } else {
                result.append(byte)
            }
            index += 1
        }
        return result
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
