import AuthSocket
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
        return reader.table(at: 0)
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

    /// How a table came to be, which decides what may still define or add to it (TOML 1.0,
    /// "Table": a table is defined once, by a header or by dotted keys, never both).
    private enum Origin: Equatable {
        /// The top level.
        case root
        /// Only named as the parent in a header (`profiles` in `[profiles.work]`): a header of its
        /// own may still define it once.
        case implicit
        /// Defined by its own `[header]`: no other header, and no dotted key written under
        /// another header, may add to it.
        case header
        /// Made by dotted keys (`work.url = …`) in the given section (0 is the top of the file, 1
        /// the part under the first header, …): more dotted keys may add to it in that section
        /// only, and no header may define it.
        case dotted(section: Int)
    }

    /// A table or a value in the tree being built. The tree is kept flat, nodes pointing at each
    /// other by index, so that adding a key deep down is one array write instead of copying
    /// every table on the way.
    private struct Node {
        /// The line that made the node (for a table defined by a header, the header's line).
        var line: Int
        /// The value; nil for a table.
        var value: TOMLValue.Content?
        /// How a table came to be (unused for a value).
        var origin: Origin
        /// A table's children by key.
        var children: [String: Int] = [:]
        /// A table's keys in the order written.
        var order: [String] = []
    }

    /// The text as UTF-8.
    private let bytes: [UInt8]
    /// Where reading is.
    private var position = 0
    /// The 1-based line `position` is on.
    private var line = 1
    /// The tree; node 0 is the top-level table.
    private var nodes = [Node(line: 1, value: nil, origin: .root)]
    /// How many headers have been read: numbers the sections that `Origin.dotted` refers to.
    private var section = 0
    /// The table the current section's keys go into.
    private var sectionTable = 0
    /// The key of that table, for messages.
    private var sectionPath: [String] = []

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
        try defineTable(path, line: headerLine)
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
        try insert(value, at: path, line: keyLine)
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
        case .quote:
            if isAt(.quote, count: 3) { throw fail("a key cannot be a multi-line string") }
            return try readBasicString()
        case .apostrophe:
            if isAt(.apostrophe, count: 3) { throw fail("a key cannot be a multi-line string") }
            return try readLiteralString()
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
        case .quote: return .string(isAt(.quote, count: 3) ? try readMultilineString(.quote) : try readBasicString())
        case .apostrophe: return .string(isAt(.apostrophe, count: 3) ? try readMultilineString(.apostrophe) : try readLiteralString())
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
        let text = String(decoding: word, as: UTF8.self)
        switch text {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        default: break
        }
        if Self.looksLikeDateOrTime(word) {
            throw Failure(line: line, message: "dates and times are not used in authd's configuration")
        }
        return try number(word, text)
    }

    /// An integer or float, by TOML 1.0's rules: '_' only between digits, no leading zeros, a
    /// sign only on decimal numbers, at least one digit on each side of '.', 64-bit integers.
    private func number(_ word: ArraySlice<UInt8>, _ text: String) throws(Failure) -> TOMLValue.Content {
        var rest = word
        var negative = false
        if let sign = rest.first, sign == .plus || sign == .minus {
            negative = sign == .minus
            rest = rest.dropFirst()
        }
        let signed = rest.count != word.count
        if rest.elementsEqual("inf".utf8) { return .float(negative ? -.infinity : .infinity) }
        if rest.elementsEqual("nan".utf8) { return .float(negative ? -.nan : .nan) }
        if rest.first == .dot { throw fail("'\(text)' is not a number (a '.' needs a digit on each side)") }
        guard let first = rest.first, Self.digitValue(first, radix: 10) != nil else {
            if signed { throw fail("'\(text)' is not a number") }
            throw fail("'\(text)' is not a value: a string goes in quotes (\"…\"), a boolean is true or false")
        }
        let invalid = fail("'\(text)' is not a number" + (word.contains(UInt8(ascii: "_")) ? " ('_' may only stand between two digits)" : ""))

        // 0x, 0o, 0b: unsigned, and the digits may start with zeros.
        if first == .zero, rest.count > 1, let radix = [UInt8(ascii: "x"): 16, UInt8(ascii: "o"): 8, UInt8(ascii: "b"): 2][rest[rest.startIndex + 1]] {
            if signed { throw fail("'\(text)': a hexadecimal, octal or binary integer takes no sign") }
            let digits = rest.dropFirst(2)
            guard Self.digitRunEnd(digits, from: digits.startIndex, radix: radix) == digits.endIndex else { throw invalid }
            guard let value = Int(Self.withoutUnderscores(digits), radix: radix) else { throw outOfRange(text) }
            return .integer(value)
        }

        // Decimal: an integer part, then a fraction, an exponent, or both for a float.
        guard let integerEnd = Self.digitRunEnd(rest, from: rest.startIndex, radix: 10) else { throw invalid }
        if first == .zero, integerEnd - rest.startIndex > 1 { throw fail("'\(text)': leading zeros are not allowed") }
        var index = integerEnd
        var isFloat = false
        if index < rest.endIndex, rest[index] == .dot {
            guard let fractionEnd = Self.digitRunEnd(rest, from: index + 1, radix: 10) else {
                throw fail("'\(text)' is not a number (a '.' needs a digit on each side)")
            }
            index = fractionEnd
            isFloat = true
        }
        if index < rest.endIndex, rest[index] == UInt8(ascii: "e") || rest[index] == UInt8(ascii: "E") {
            index += 1
            if index < rest.endIndex, rest[index] == .plus || rest[index] == .minus { index += 1 }
            // The exponent may have leading zeros (TOML 1.0, "Float").
            guard let exponentEnd = Self.digitRunEnd(rest, from: index, radix: 10) else {
                throw fail("'\(text)' is not a number (an exponent needs digits)")
            }
            index = exponentEnd
            isFloat = true
        }
        guard index == rest.endIndex else { throw invalid }
        let digits = (negative ? "-" : "") + Self.withoutUnderscores(rest)
        if isFloat {
            // The grammar is checked above; the standard library rounds to the nearest double
            // (an exponent too large for a double gives an infinity, which refresh_lead refuses).
            guard let value = Double(digits) else { throw invalid }
            return .float(value)
        }
        guard let value = Int(digits) else { throw outOfRange(text) }
        return .integer(value)
    }

    private func outOfRange(_ text: String) -> Failure {
        fail("'\(text)' does not fit in a 64-bit integer")
    }

    // MARK: Strings

    /// `"…"`: escapes, no line break, no control character but tab.
    private mutating func readBasicString() throws(Failure) -> String {
        position += 1
        var result: [UInt8] = []
        while true {
            guard let byte = peek(), !atLineEnd else {
                throw fail("the string is not closed: a \"…\" string ends on its line (\"\"\"…\"\"\" may span lines)")
            }
            switch byte {
            case .quote: position += 1; return String(decoding: result, as: UTF8.self)
            case .backslash: try readEscape(into: &result)
            default: try appendCharacter(byte, to: &result, in: "a string; write it as an escape such as \\u0001")
            }
        }
    }

    /// `'…'`: taken as written, no line break, no control character but tab.
    private mutating func readLiteralString() throws(Failure) -> String {
        position += 1
        var result: [UInt8] = []
        while true {
            guard let byte = peek(), !atLineEnd else {
                throw fail("the string is not closed: a '…' string ends on its line ('''…''' may span lines)")
            }
            if byte == .apostrophe { position += 1; return String(decoding: result, as: UTF8.self) }
            try appendCharacter(byte, to: &result, in: "a literal string")
        }
    }

    /// `"""…"""` (escapes, and a backslash at a line's end joins lines) or `'''…'''` (as
    /// written). A line break right after the opening quotes is not part of the string; line
    /// breaks are LF in the result whether the file has LF or CRLF.
    private mutating func readMultilineString(_ delimiter: UInt8) throws(Failure) -> String {
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
    private func isLineEndingBackslash() -> Bool {
        var offset = 1
        while peek(offset) == .space || peek(offset) == .tab { offset += 1 }
        return peek(offset) == .lineFeed || (peek(offset) == .carriageReturn && peek(offset + 1) == .lineFeed)
    }

    /// Appends a character of a string's text, refusing the control characters TOML refuses.
    private mutating func appendCharacter(_ byte: UInt8, to result: inout [UInt8], in what: String) throws(Failure) {
        if isControl(byte) { throw fail("control character \(describeCharacter()) in \(what)") }
        result.append(byte)
        position += 1
    }

    /// An escape in a basic string, at its backslash: the ones TOML 1.0 defines, no others.
    private mutating func readEscape(into result: inout [UInt8]) throws(Failure) {
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
            guard let digit = peek(offset).flatMap({ Self.digitValue($0, radix: 16) }) else {
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

    // MARK: Tables

    /// Defines the table a header names, creating the tables above it that do not exist yet.
    private mutating func defineTable(_ path: [String], line headerLine: Int) throws(Failure) {
        var table = 0
        for index in path.indices {
            let name = Self.keyPath(path[...index])
            guard let child = nodes[table].children[path[index]] else {
                table = addNode(Node(line: headerLine, value: nil, origin: index == path.count - 1 ? .header : .implicit),
                                key: path[index], to: table)
                continue
            }
            let existing = nodes[child]
            if existing.value != nil {
                throw Failure(line: headerLine, message: "'\(name)' already has a value (line \(existing.line)); it cannot also be a table")
            }
            if index == path.count - 1 {
                switch existing.origin {
                case .implicit:
                    nodes[child].origin = .header
                    nodes[child].line = headerLine
                case .header, .root:
                    throw Failure(line: headerLine, message: "the table [\(name)] is defined twice (first on line \(existing.line))")
                case .dotted:
                    throw Failure(line: headerLine, message: "the table [\(name)] is already defined by the dotted keys on line \(existing.line); a table is defined once")
                }
            }
            table = child
        }
        section += 1
        sectionTable = table
        sectionPath = path
    }

    /// Sets a key of the current section, creating the tables its dots name.
    private mutating func insert(_ value: TOMLValue.Content, at path: [String], line keyLine: Int) throws(Failure) {
        var table = sectionTable
        for index in path.indices {
            let name = Self.keyPath(sectionPath + path[...index])
            guard let child = nodes[table].children[path[index]] else {
                let node = index == path.count - 1 ? Node(line: keyLine, value: value, origin: .root)
                    : Node(line: keyLine, value: nil, origin: .dotted(section: section))
                table = addNode(node, key: path[index], to: table)
                continue
            }
            let existing = nodes[child]
            if index == path.count - 1 {
                if existing.value != nil {
                    throw Failure(line: keyLine, message: "duplicate key '\(name)' (first set on line \(existing.line))")
                }
                throw Failure(line: keyLine, message: "'\(name)' is already a table (line \(existing.line)); it cannot also be a value")
            }
            if existing.value != nil {
                throw Failure(line: keyLine, message: "'\(name)' already has a value (line \(existing.line)); it cannot also be a table")
            }
            switch existing.origin {
            case .implicit:
                nodes[child].origin = .dotted(section: section)
            case .dotted(let made) where made == section:
                break
            case .dotted:
                // Unreachable as the rules stand (a later section's path to such a table passes
                // through a table its header defined, refused below), kept so that no change to
                // them can let dotted keys reopen a table from another section.
                throw Failure(line: keyLine, message: "the table '\(name)' was defined by the dotted keys on line \(existing.line), under another header; a table's keys are written in one place")
            case .header, .root:
                throw Failure(line: keyLine, message: "the table [\(name)] is defined by its header on line \(existing.line); write its keys there")
            }
            table = child
        }
    }

    /// Adds `node` to `table` under `key`; returns its index.
    private mutating func addNode(_ node: Node, key: String, to table: Int) -> Int {
        nodes.append(node)
        nodes[table].children[key] = nodes.count - 1
        nodes[table].order.append(key)
        return nodes.count - 1
    }

    /// The finished tree from node `index` down.
    private func table(at index: Int) -> TOMLTable {
        let node = nodes[index]
        var values: [String: TOMLValue] = [:]
        for (key, child) in node.children {
            values[key] = TOMLValue(nodes[child].value ?? .table(table(at: child)), line: nodes[child].line)
        }
        return TOMLTable(line: node.line, definedByHeader: node.origin == .header, keys: node.order, values: values)
    }

    // MARK: Characters

    private func peek(_ offset: Int = 0) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    /// Whether `count` copies of `byte` start at `position`.
    private func isAt(_ byte: UInt8, count: Int) -> Bool {
        (0..<count).allSatisfy { peek($0) == byte }
    }

    /// Whether reading is at a line break (LF or CRLF).
    private var atLineEnd: Bool {
        peek() == .lineFeed || (peek() == .carriageReturn && peek(1) == .lineFeed)
    }

    private mutating func skipBlanks() {
        while peek() == .space || peek() == .tab { position += 1 }
    }

    /// The control characters TOML allows in no string or comment: all but tab.
    private func isControl(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != .tab) || byte == 0x7F
    }

    /// The character at `position` for a message: `'x'`, `U+0007` for a control character.
    private func describeCharacter() -> String {
        guard let byte = peek() else { return "the end of the file" }
        if atLineEnd { return "the end of the line" }
        if isControl(byte) { return "U+" + Self.hex(UInt32(byte), digits: 4) }
        var end = position + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return "'" + String(decoding: bytes[position..<end], as: UTF8.self) + "'"
    }

    private func fail(_ message: String) -> Failure {
        Failure(line: line, message: message)
    }

    private static func isBareKeyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), .minus: true
        default: false
        }
    }

    private static func digitValue(_ byte: UInt8, radix: Int) -> Int? {
        let value: Int? = switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
        return value.flatMap { $0 < radix ? $0 : nil }
    }

    /// The end of the digits starting at `start` (`digit ('_'? digit)*`), or nil when there is
    /// no digit there or an '_' does not stand between two digits.
    private static func digitRunEnd(_ text: ArraySlice<UInt8>, from start: Int, radix: Int) -> Int? {
        guard start < text.endIndex, digitValue(text[start], radix: radix) != nil else { return nil }
        var index = start + 1
        while index < text.endIndex {
            if digitValue(text[index], radix: radix) != nil {
                index += 1
            } else if text[index] == UInt8(ascii: "_") {
                guard index + 1 < text.endIndex, digitValue(text[index + 1], radix: radix) != nil else { return nil }
                index += 2
            } else {
                break
            }
        }
        return index
    }

    private static func withoutUnderscores(_ text: ArraySlice<UInt8>) -> String {
        String(decoding: text.filter { $0 != UInt8(ascii: "_") }, as: UTF8.self)
    }

    /// `1979-05-27…` or `07:32…`: the start of a TOML date or time.
    private static func looksLikeDateOrTime(_ word: ArraySlice<UInt8>) -> Bool {
        let isDigit = { (offset: Int) in
            word.startIndex + offset < word.endIndex && digitValue(word[word.startIndex + offset], radix: 10) != nil
        }
        let has = { (offset: Int, byte: UInt8) in
            word.startIndex + offset < word.endIndex && word[word.startIndex + offset] == byte
        }
        let date = (0..<4).allSatisfy(isDigit) && has(4, .minus) && isDigit(5)
        let time = (0..<2).allSatisfy(isDigit) && has(2, UInt8(ascii: ":"))
        return date || time
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

/// The ASCII characters the reader looks for, by name.
private extension UInt8 {
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
