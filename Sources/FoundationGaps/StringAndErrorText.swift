#if canImport(Glibc)
import Glibc
#endif
import FoundationEssentials

// What the product's modules used from Foundation's string and error extensions, for
// FoundationEssentials, which has neither: Foundation would link ICU's 35 MiB into every binary
// (docs/benchmarks.md, installed size).

extension StringProtocol {
    /// The text without leading and trailing whitespace and newlines (Unicode's, as Foundation's
    /// `.whitespacesAndNewlines`).
    public func trimmingWhitespace() -> String { trimming { $0.isWhitespace } }

    /// The text without the leading and trailing characters that `drop` picks.
    public func trimming(_ drop: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else { return "" }
        return String(self[first...last])
    }
}

extension Error {
    /// The error's text for people: a `LocalizedError`'s description; for FoundationEssentials' file
    /// errors (which describe themselves as a dump of their fields) the file and the system's
    /// reason; else what the error says of itself. (Foundation's `localizedDescription` without
    /// Foundation.)
    public var readableDescription: String {
        if let described = (self as? LocalizedError)?.errorDescription { return described }
        if let file = self as? CocoaError { return file.readableDescription }
        if let posix = self as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        return String(describing: self)
    }
}

extension CocoaError {
    /// "cannot read /path: No such file or directory" and the like.
    fileprivate var readableDescription: String {
        let reason = (underlying as? POSIXError).map { String(cString: strerror($0.code.rawValue)) }
        let action: String
        switch code {
        case .fileReadNoSuchFile, .fileReadNoPermission, .fileReadCorruptFile, .fileReadUnknown, .fileReadInvalidFileName,
             .fileReadTooLarge, .fileReadUnknownStringEncoding, .fileReadInapplicableStringEncoding:
            action = "cannot read"
        case .fileWriteNoPermission, .fileWriteOutOfSpace, .fileWriteVolumeReadOnly, .fileWriteFileExists, .fileWriteUnknown,
             .fileWriteInvalidFileName, .fileWriteInapplicableStringEncoding:
            action = "cannot write"
        case .fileNoSuchFile:
            action = "cannot find"
        default:
            action = "cannot use"
        }
        let what = filePath ?? "a file"
        switch code {
        case .fileReadUnknownStringEncoding, .fileReadInapplicableStringEncoding: return "\(action) \(what): it is not UTF-8 text"
        default: return "\(action) \(what)" + (reason.map { ": \($0)" } ?? " (error \(code.rawValue))")
        }
    }
}

extension StringProtocol {
    /// The text cut or padded with spaces to exactly `length` characters, for columns (as
    /// `padding(toLength:withPad:startingAt:)` with a space).
    public func padded(to length: Int) -> String {
        count >= length ? String(prefix(length)) : String(self) + String(repeating: " ", count: length - count)
    }
}

extension StringProtocol {
    /// The text with `&`, `<` and `>` written as entities, for HTML and the notification body's
    /// markup. Scalar by scalar: a `<` that a combining mark follows is one Character to Swift but
    /// still a `<` to a markup parser.
    public var escapingMarkup: String {
        var escaped = ""
        escaped.unicodeScalars.reserveCapacity(unicodeScalars.count)
        for scalar in unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
