/// A table read by `TOMLReader`: its keys in the order they were written, each value with the
/// line it was written on, so that a problem found after reading (a URL that is not one, an
/// unknown key) can still be reported as `config.toml:7: …`.
struct TOMLTable: Equatable, Sendable {
    /// The line the table was defined on: its `[header]`, or, for a table that only dotted keys or
    /// other headers' names made, the first line that named it. 1 for the top level.
    let line: Int
    /// Whether a `[header]` of its own defines the table (then `line` is the header's line).
    /// The profile editor only cuts out tables written that way.
    let definedByHeader: Bool
    /// The keys, in the order they were first written.
    let keys: [String]
    /// The values by key.
    private let values: [String: TOMLValue]

    /// Creates a table; `keys` must name exactly the keys of `values`, in the order written.
    init(line: Int, definedByHeader: Bool, keys: [String], values: [String: TOMLValue]) {
        self.line = line
        self.definedByHeader = definedByHeader
        self.keys = keys
        self.values = values
    }

    /// The value of `key`, or nil when the table has no such key.
    subscript(key: String) -> TOMLValue? { values[key] }

    /// The keys with their values, in the order written.
    var entries: [(key: String, value: TOMLValue)] { keys.map { ($0, values[$0]!) } }

    /// The lines of every `[header]` in this table and the tables under it, in no particular
    /// order. The profile editor uses them to find where a table's text ends.
    var headerLines: [Int] {
        var lines = definedByHeader ? [line] : []
        for key in keys {
            if let table = values[key]?.table { lines += table.headerLines }
        }
        return lines
    }
}

/// One value read by `TOMLReader`, with the line it was written on (the line of its key: TOML
/// puts a key, its '=' and the start of its value on one line).
struct TOMLValue: Equatable, Sendable {
    /// What the value is. Only the kinds authd's configuration uses: the reader refuses arrays,
    /// inline tables and dates.
    enum Content: Equatable, Sendable {
        /// A string, whichever of TOML's four ways it was written.
        case string(String)
        /// A 64-bit integer.
        case integer(Int)
        /// A float, infinities and NaN included.
        case float(Double)
        /// `true` or `false`.
        case boolean(Bool)
        /// A table: from a `[header]`, or made by dotted keys.
        case table(TOMLTable)
    }

    /// What the value is.
    let content: Content
    /// The 1-based line it was written on; for a table, `TOMLTable.line`.
    let line: Int

    /// Creates a value.
    init(_ content: Content, line: Int) {
        self.content = content
        self.line = line
    }

    /// The string, if the value is one.
    var string: String? {
        guard case .string(let value) = content else { return nil }
        return value
    }
    /// The integer, if the value is one.
    var integer: Int? {
        guard case .integer(let value) = content else { return nil }
        return value
    }
    /// The float, if the value is one (an integer is not: TOML keeps the two apart).
    var float: Double? {
        guard case .float(let value) = content else { return nil }
        return value
    }
    /// The boolean, if the value is one.
    var boolean: Bool? {
        guard case .boolean(let value) = content else { return nil }
        return value
    }
    /// The table, if the value is one.
    var table: TOMLTable? {
        guard case .table(let value) = content else { return nil }
        return value
    }
}
