/// Looking at the text a byte at a time, and naming what is found there in messages.
extension TOMLReader {
    /// The byte `offset` places after `position`, or nil past the end of the text.
    func peek(_ offset: Int = 0) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    /// Whether `count` copies of `byte` start at `position`.
    func isAt(_ byte: UInt8, count: Int) -> Bool {
        (0..<count).allSatisfy { peek($0) == byte }
    }

    /// Whether reading is at a line break (LF or CRLF).
    var atLineEnd: Bool {
        peek() == .lineFeed || (peek() == .carriageReturn && peek(1) == .lineFeed)
    }

    /// Moves past spaces and tabs.
    mutating func skipBlanks() {
        while peek() == .space || peek() == .tab { position += 1 }
    }

    /// The control characters TOML allows in no string or comment: all but tab.
    func isControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != .tab) || byte == 0x7F
    }

    /// The character at `position` for a message: `'x'`, `U+0007` for a control character.
    func describeCharacter() -> String {
        guard let byte = peek() else { return "the end of the file" }
        if atLineEnd { return "the end of the line" }
        if isControl(byte) { return "U+" + Self.hex(UInt32(byte), digits: 4) }
        var end = position + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return "'" + String(decoding: bytes[position..<end], as: UTF8.self) + "'"
    }

    /// A failure on the line reading is on.
    func fail(_ message: String) -> Failure {
        Failure(line: line, message: message)
    }

    /// Whether `byte` may stand in a bare key: `A-Za-z0-9_-`.
    static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), .minus: true
        default: false
        }
    }

    /// `value` in upper-case hexadecimal, padded with zeros to `digits` digits.
    static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

/// The ASCII characters the TOML reader looks for, by name (internal rather than private because
/// the reader's files and `TOMLNumber` share them).
extension UInt8 {
    static let tab = UInt8(ascii: "\t")
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let quote = UInt8(ascii: "\"")
    static let apostrophe = UInt8(ascii: "'")
    static let backslash = UInt8(ascii: "\\")
    static let hash = UInt8(ascii: "#")
    static let equals = UInt8(ascii: "=")
    static let dot = UInt8(ascii: ".")
    static let plus = UInt8(ascii: "+")
    static let minus = UInt8(ascii: "-")
    static let zero = UInt8(ascii: "0")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let openBrace = UInt8(ascii: "{")
}
