import AuthProtocol
/// Reads the TOML that authd's `config.toml` is written in into a `TOMLTable` whose every value
/// remembers its line.
///
/// Why not a TOML package: the one the project used imported Foundation, which links all of it and
/// ICU (about 43 MiB) into every statically linked program that reads the configuration. The
/// configuration needs a small part of TOML: tables, strings, integers, floats and booleans. This
/// reader follows TOML 1.0 for all of that (keys bare, quoted and dotted, the four kinds of
/// string with every escape, integers in the four bases, floats with `inf` and `nan`, comments,
/// the rules on defining a table once), and refuses the rest of TOML (arrays, inline tables,
/// arrays of tables, dates and times) by name, so that someone who wrote one learns that authd's
/// configuration does not use it rather than that the file is broken.
///
/// It stops at the first problem and reports its line. It reads the text's UTF-8 bytes: every
/// character TOML gives a meaning to is ASCII, and the bytes of any other character pass
/// unchanged into the strings and comments that may hold them.
struct TOMLReader {
    /// Why a text was refused, and on which line.
    struct Failure: Error, Equatable, Sendable {
        /// The 1-based line of the problem.
        let line: Int
        /// What is wrong, without the file's name, which the caller adds.
        let message: String
    }

    /// Reads `text` into its top-level table, or throws the first problem found.
    static func read(_ text: String) throws(Failure) -> TOMLTable {
        var reader = TOMLReader(text)
        try reader.readDocument()
        return reader.tree.root
    }

    /// `parts` written as one TOML key: each part bare where it can be, else quoted, so that a
    /// profile named "my.profile" reads `profiles."my.profile"` in messages, not as three keys.
    static func keyPath(_ parts: some Sequence<String>) -> String {
        parts.map { part in
            !part.isEmpty && part.utf8.allSatisfy(isBareKeyByte) ? part : quoted(part)
        }.joined(separator: ".")
    }

    /// `text` as a TOML basic string, quotes included: TOML's escapes are JSON's.
    static func quoted(_ text: String) -> String { JSONText.quoted(text) }

    // MARK: State

    // Internal rather than private: the reader's extensions in other files (strings,
    // characters) read and move them.

    /// The text as UTF-8.
    let bytes: [UInt8]
    /// Where reading is.
    var position = 0
    /// The 1-based line `position` is on.
    var line = 1
    /// The tables and values read so far.
    private var tree = TOMLTree()

    private init(_ text: String) {
        bytes = Array(text.utf8)
        // A byte order mark is not TOML, but some editors write one, and it carries no meaning.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    // MARK: Lines

    /// Reads the whole text, a line at a time.
    private mutating func readDocument() throws(Failure) {
        while true {
            skipBlanks()
            guard let byte = peek() else { return }
            switch byte {
            case .hash, .lineFeed, .carriageReturn: break
            case .openBracket: try readHeader(); try expectEndOfLine(after: "the table header")
            default: try readKeyValue(); try expectEndOfLine(after: "the value")
            }
            try skipCommentAndNewline()
        }
    }

    /// After a header or a value: only blanks and a comment may follow on the line.
    private mutating func expectEndOfLine(after what: String) throws(Failure) {
        skipBlanks()
        switch peek() {
        case nil, .hash, .lineFeed, .carriageReturn: return
        default: throw fail("unexpected \(describeCharacter()) after \(what); each key = value and each [table] header goes on a line of its own, and a comment starts with '#'")
        }
    }

    /// Consumes an optional comment and the line's end (LF or CRLF), or nothing at the end of the text.
    private mutating func skipCommentAndNewline() throws(Failure) {
        if peek() == .hash {
            position += 1
            // TOML allows any character in a comment but the control characters other than tab.
            while let byte = peek(), byte != .lineFeed, !(byte == .carriageReturn && peek(1) == .lineFeed) {
                if isControl(byte) { throw fail("control character \(describeCharacter()) in a comment") }
                position += 1
            }
        }
        switch peek() {
        case nil: return
        case .lineFeed: position += 1
        case .carriageReturn where peek(1) == .lineFeed: position += 2
        default: throw fail("a carriage return must be followed by a line feed (a line ends with LF or CRLF)")
        }
        line += 1
    }

    /// `[a.b.c]`: the following keys go into table a.b.c, defined here.
    private mutating func readHeader() throws(Failure) {
        let headerLine = line
        position += 1
        if peek() == .openBracket { throw fail("arrays of tables ([[…]]) are not used in authd's configuration") }
        let path = try readKey()
        guard peek() == .closeBracket else { throw fail("expected ']' at the end of the table header, found \(describeCharacter())") }
        position += 1
        try tree.defineTable(path, line: headerLine)
    }

    /// `key = value`, the key possibly dotted.
    private mutating func readKeyValue() throws(Failure) {
        let keyLine = line
        let path = try readKey()
        guard peek() == .equals else {
            throw fail("expected '=' after the key '\(Self.keyPath(path))', found \(describeCharacter())")
        }
        position += 1
        skipBlanks()
        let value = try readValue()
        try tree.insert(value, at: path, line: keyLine)
    }

    // MARK: Keys

    /// The most parts a key may have: authd's deepest is three (`profiles.work.url`). A bound
    /// keeps a hostile file's nesting from costing time and stack (the tree is read recursively).
    static let maxKeyParts = 16

    /// A key, bare, quoted or dotted (`a . "b.c" . d`), and the blanks after it.
    private mutating func readKey() throws(Failure) -> [String] {
        var parts: [String] = []
        while true {
            skipBlanks()
            parts.append(try readSimpleKey())
            guard parts.count <= Self.maxKeyParts else {
                throw fail("a key of more than \(Self.maxKeyParts) parts is not used in authd's configuration")
            }
            skipBlanks()
            guard peek() == .dot else { return parts }
            position += 1
        }
    }

    /// One part of a key: bare (`A-Za-z0-9_-`, digits alone included: `1234 = 1` is a key) or a
    /// single-line string, basic or literal.
    private mutating func readSimpleKey() throws(Failure) -> String {
        switch peek() {
        case let delimiter? where delimiter == .quote || delimiter == .apostrophe:
            if isAt(delimiter, count: 3) { throw fail("a key cannot be a multi-line string") }
            return try readSingleLineString(delimiter)
        default:
            let start = position
            while let byte = peek(), Self.isBareKeyByte(byte) { position += 1 }
            if position > start { return String(decoding: bytes[start..<position], as: UTF8.self) }
            switch peek() {
            case nil, .lineFeed, .carriageReturn, .hash: throw fail("expected a key before the end of the line")
            default: throw fail("expected a key, found \(describeCharacter()) (a bare key is letters A-Z and a-z, digits, '_' and '-'; put any other key in quotes)")
            }
        }
    }

    // MARK: Values

    /// A value, at its first character.
    private mutating func readValue() throws(Failure) -> TOMLValue.Content {
        switch peek() {
        case nil, .lineFeed, .carriageReturn, .hash: throw fail("a value is missing after '='")
        case let delimiter? where delimiter == .quote || delimiter == .apostrophe:
            return .string(isAt(delimiter, count: 3) ? try readMultilineString(delimiter) : try readSingleLineString(delimiter))
        case .openBracket: throw fail("arrays are not used in authd's configuration")
        case .openBrace: throw fail("inline tables ({ … }) are not used in authd's configuration; write a [table] header and one key = value per line")
        default: return try readBareValue()
        }
    }

    /// A value not in quotes: a boolean or a number; a date or time is recognised to be refused
    /// by name. Taken as one word up to a blank, comment or line end, so that `truex` or `1,2`
    /// is refused whole rather than read in part.
    private mutating func readBareValue() throws(Failure) -> TOMLValue.Content {
        let start = position
        while let byte = peek(), byte != .space, byte != .tab, byte != .hash, byte != .lineFeed, byte != .carriageReturn {
            position += 1
        }
        let word = bytes[start..<position]
        if word.elementsEqual("true".utf8) { return .boolean(true) }
        if word.elementsEqual("false".utf8) { return .boolean(false) }
        if Self.looksLikeDateOrTime(word) {
            throw Failure(line: line, message: "dates and times are not used in authd's configuration")
        }
        return try TOMLNumber.read(word, line: line)
    }

    /// `1979-05-27…` or `07:32…`: the start of a TOML date or time.
    private static func looksLikeDateOrTime(_ word: ArraySlice<UInt8>) -> Bool {
        let isDigit = { (offset: Int) in
            word.startIndex + offset < word.endIndex && TOMLNumber.digitValue(word[word.startIndex + offset], radix: 10) != nil
        }
        let has = { (offset: Int, byte: UInt8) in
            word.startIndex + offset < word.endIndex && word[word.startIndex + offset] == byte
        }
        let date = (0..<4).allSatisfy(isDigit) && has(4, .minus) && isDigit(5)
        let time = (0..<2).allSatisfy(isDigit) && has(2, UInt8(ascii: ":"))
        return date || time
    }
}
