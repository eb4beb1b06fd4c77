/// TOML 1.0's integers and floats, read from a word `TOMLReader` has already cut out of a line.
///
/// A namespace of pure functions: a number needs only its own characters (and the line, for a
/// message), never the reader's place in the text.
enum TOMLNumber {
    /// `word` as an integer or float, by TOML 1.0's rules: '_' only between digits, no leading
    /// zeros, a sign only on decimal numbers, at least one digit on each side of '.', 64-bit
    /// integers. A problem is reported on `line`.
    static func read(_ word: ArraySlice<UInt8>, line: Int) throws(TOMLReader.Failure) -> TOMLValue.Content {
        let text = String(decoding: word, as: UTF8.self)
        func fail(_ message: String) -> TOMLReader.Failure { TOMLReader.Failure(line: line, message: message) }
        let outOfRange = fail("'\(text)' does not fit in a 64-bit integer")

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
        guard let first = rest.first, digitValue(first, radix: 10) != nil else {
            if signed { throw fail("'\(text)' is not a number") }
            throw fail("'\(text)' is not a value: a string goes in quotes (\"…\"), a boolean is true or false")
        }
        let invalid = fail("'\(text)' is not a number" + (word.contains(UInt8(ascii: "_")) ? " ('_' may only stand between two digits)" : ""))

        // 0x, 0o, 0b: unsigned, and the digits may start with zeros.
        if first == .zero, rest.count > 1, let radix = [UInt8(ascii: "x"): 16, UInt8(ascii: "o"): 8, UInt8(ascii: "b"): 2][rest[rest.startIndex + 1]] {
            if signed { throw fail("'\(text)': a hexadecimal, octal or binary integer takes no sign") }
            let digits = rest.dropFirst(2)
            guard digitRunEnd(digits, from: digits.startIndex, radix: radix) == digits.endIndex else { throw invalid }
            guard let value = Int(withoutUnderscores(digits), radix: radix) else { throw outOfRange }
            return .integer(value)
        }

        // Decimal: an integer part, then a fraction, an exponent, or both for a float.
        guard let integerEnd = digitRunEnd(rest, from: rest.startIndex, radix: 10) else { throw invalid }
        if first == .zero, integerEnd - rest.startIndex > 1 { throw fail("'\(text)': leading zeros are not allowed") }
        var index = integerEnd
        var isFloat = false
        if index < rest.endIndex, rest[index] == .dot {
            guard let fractionEnd = digitRunEnd(rest, from: index + 1, radix: 10) else {
                throw fail("'\(text)' is not a number (a '.' needs a digit on each side)")
            }
            index = fractionEnd
            isFloat = true
        }
        if index < rest.endIndex, rest[index] == UInt8(ascii: "e") || rest[index] == UInt8(ascii: "E") {
            index += 1
            if index < rest.endIndex, rest[index] == .plus || rest[index] == .minus { index += 1 }
            // The exponent may have leading zeros (TOML 1.0, "Float").
            guard let exponentEnd = digitRunEnd(rest, from: index, radix: 10) else {
                throw fail("'\(text)' is not a number (an exponent needs digits)")
            }
            index = exponentEnd
            isFloat = true
        }
        guard index == rest.endIndex else { throw invalid }
        let digits = (negative ? "-" : "") + withoutUnderscores(rest)
        if isFloat {
            // The grammar is checked above; the standard library rounds to the nearest double
            // (an exponent too large for a double gives an infinity, which refresh_lead refuses).
            guard let value = Double(digits) else { throw invalid }
            return .float(value)
        }
        guard let value = Int(digits) else { throw outOfRange }
        return .integer(value)
    }

    /// The value of `byte` as a digit in `radix` (up to 16, either case), or nil.
    static func digitValue(_ byte: UInt8, radix: Int) -> Int? {
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
}
