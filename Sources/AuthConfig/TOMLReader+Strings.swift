/// The four kinds of TOML string, read with every escape TOML 1.0 defines.
extension TOMLReader {
    /// `"…"` (escapes) or `'…'` (as written), by its opening `delimiter`: no line break, no
    /// control character but tab.
    mutating func readSingleLineString(_ delimiter: UInt8) throws(Failure) -> String {
        let isBasic = delimiter == .quote
        position += 1
        var result: [UInt8] = []
        while true {
            guard let byte = peek(), !atLineEnd else {
                throw fail(isBasic ? "the string is not closed: a \"…\" string ends on its line (\"\"\"…\"\"\" may span lines)"
                                   : "the string is not closed: a '…' string ends on its line ('''…''' may span lines)")
            }
            switch byte {
            case delimiter: position += 1; return String(decoding: result, as: UTF8.self)
            case .backslash where isBasic: try readEscape(into: &result)
            default: try appendCharacter(byte, to: &result, in: isBasic ? "a string; write it as an escape such as \\u0001" : "a literal string")
            }
        }
    }

    /// `"""…"""` (escapes, and a backslash at a line's end joins lines) or `'''…'''` (as
    /// written). A line break right after the opening quotes is not part of the string; line
    /// breaks are LF in the result whether the file has LF or CRLF.
    mutating func readMultilineString(_ delimiter: UInt8) throws(Failure) -> String {
        let openingLine = line
        position += 3
        if peek() == .lineFeed { position += 1; line += 1 }
        else if peek() == .carriageReturn, peek(1) == .lineFeed { position += 2; line += 1 }
        var result: [UInt8] = []
        while true {
            guard let byte = peek() else {
                throw Failure(line: openingLine, message: "the multi-line string opened here is not closed")
            }
            switch byte {
            case delimiter:
                // One or two quotes are content; three close the string, and up to two more
                // just before them are still content (`""""a""""` is `"a"`). A sixth is left to
                // be refused as text after the value.
                var run = 0
                while run < 5, peek(run) == delimiter { run += 1 }
                if run >= 3 {
                    result += repeatElement(delimiter, count: run - 3)
                    position += run
                    return String(decoding: result, as: UTF8.self)
                }
                result += repeatElement(delimiter, count: run)
                position += run
            case .backslash where delimiter == .quote:
                if isLineEndingBackslash() {
                    // Trimmed with every blank and line break up to the next other character.
                    position += 1
                    while let next = peek() {
                        if next == .space || next == .tab { position += 1 }
                        else if next == .lineFeed { position += 1; line += 1 }
                        else if next == .carriageReturn, peek(1) == .lineFeed { position += 2; line += 1 }
                        else { break }
                    }
                } else {
                    try readEscape(into: &result)
                }
            case .lineFeed:
                result.append(.lineFeed)
                position += 1
                line += 1
            case .carriageReturn where peek(1) == .lineFeed:
                result.append(.lineFeed)
                position += 2
                line += 1
            default:
                try appendCharacter(byte, to: &result, in: "a string; write it as an escape such as \\u0001")
            }
        }
    }

    /// Whether the backslash at `position` is the last character on its line but blanks.
    func isLineEndingBackslash() -> Bool {
        var offset = 1
        while peek(offset) == .space || peek(offset) == .tab { offset += 1 }
        return peek(offset) == .lineFeed || (peek(offset) == .carriageReturn && peek(offset + 1) == .lineFeed)
    }

    /// Appends a character of a string's text, refusing the control characters TOML refuses.
    mutating func appendCharacter(_ byte: UInt8, to result: inout [UInt8], in what: String) throws(Failure) {
        if isControl(byte) { throw fail("control character \(describeCharacter()) in \(what)") }
        result.append(byte)
        position += 1
    }

    /// An escape in a basic string, at its backslash: the ones TOML 1.0 defines, no others.
    mutating func readEscape(into result: inout [UInt8]) throws(Failure) {
        position += 1
        guard let byte = peek(), !atLineEnd else { throw fail("the string ends in the middle of an escape") }
        let simple: UInt8? = switch byte {
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "t"): .tab
        case UInt8(ascii: "n"): .lineFeed
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "r"): .carriageReturn
        case .quote: .quote
        case .backslash: .backslash
        default: nil
        }
        if let simple {
            result.append(simple)
            position += 1
            return
        }
        guard byte == UInt8(ascii: "u") || byte == UInt8(ascii: "U") else {
            throw fail("invalid escape: a backslash followed by \(describeCharacter()) (TOML's escapes are \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX and \\UXXXXXXXX)")
        }
        let count = byte == UInt8(ascii: "u") ? 4 : 8
        var value: UInt32 = 0
        for offset in 1...count {
            guard let digit = peek(offset).flatMap({ TOMLNumber.digitValue($0, radix: 16) }) else {
                throw fail("\\\(Character(Unicode.Scalar(byte))) must be followed by \(count) hexadecimal digits")
            }
            value = value * 16 + UInt32(digit)
        }
        guard let scalar = Unicode.Scalar(value) else {
            throw fail("\\\(Character(Unicode.Scalar(byte)))\(Self.hex(value, digits: count)) is not a Unicode scalar value")
        }
        result += Array(String(scalar).utf8)
        position += 1 + count
    }
}
