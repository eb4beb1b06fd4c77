import FoundationEssentials

// What the product's modules used from Foundation's string and error extensions, for
// FoundationEssentials, which has neither: Foundation would link ICU's 35 MiB into every binary
// (README "Benchmarks", installed size).

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
    /// The error's text for people: a `LocalizedError`'s description, else what the error says of
    /// itself. (Foundation's `localizedDescription` without Foundation: for other errors it said
    /// only "The operation could not be completed".)
    public var readableDescription: String {
        (self as? LocalizedError)?.errorDescription ?? String(describing: self)
    }
}

extension StringProtocol {
    /// The text cut or padded with spaces to exactly `length` characters, for columns (as
    /// `padding(toLength:withPad:startingAt:)` with a space).
    public func padded(to length: Int) -> String {
        count >= length ? String(prefix(length)) : String(self) + String(repeating: " ", count: length - count)
    }
}
