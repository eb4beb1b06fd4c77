/// Finds the line a key of a simple TOML file is written on, for error messages. TOMLKit reports
/// positions only for syntax errors; a bad URL or key found afterwards still deserves
/// "config.toml:7:". Understands `[a.b]` headers and `key = value` lines, which is how authd's
/// configuration is written; a key written some other way (inline tables, dotted keys) is
/// reported without a line rather than with a wrong one.
struct KeyLocator {
    private let lines: [Substring]

    init(_ text: String) { lines = text.split(separator: "\n", omittingEmptySubsequences: false) }

    /// The 1-based line of `key` in table `table` ("" for the top level), or of the table's header
    /// when `key` is nil.
    func line(of key: String?, in table: String) -> Int? {
        var current = ""
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                let inside = line.dropFirst().prefix { $0 != "]" }
                current = inside.split(separator: ".").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ".")
                if key == nil, current == table { return index + 1 }
                continue
            }
            guard let key, current == table, let equals = line.firstIndex(of: "=") else { continue }
            if line[..<equals].trimmingCharacters(in: .whitespaces) == key { return index + 1 }
        }
        return nil
    }

    /// `source:line` when the line is known, else `source`.
    func at(_ source: String, key: String?, in table: String) -> String {
        line(of: key, in: table).map { "\(source):\($0)" } ?? source
    }
}
