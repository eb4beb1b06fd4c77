/// The tables and values `TOMLReader` has read so far, and TOML 1.0's rules on defining a table
/// once ("Table": by a header or by dotted keys, never both, and never twice).
///
/// Kept apart from the reader because the rules need only keys and line numbers, never the text:
/// the reader says what it found where, the tree decides whether that may stand.
struct TOMLTree {
    /// How a table came to be, which decides what may still define or add to it.
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

    /// A table or a value in the tree. The tree is kept flat, nodes pointing at each other by
    /// index, so that adding a key deep down is one array write instead of copying every table
    /// on the way.
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

    /// The nodes; node 0 is the top-level table.
    private var nodes = [Node(line: 1, value: nil, origin: .root)]
    /// How many headers have been read: numbers the sections that `Origin.dotted` refers to.
    private var section = 0
    /// The table the current section's keys go into.
    private var sectionTable = 0
    /// The key of that table, for messages.
    private var sectionPath: [String] = []

    /// The finished top-level table.
    var root: TOMLTable { table(at: 0) }

    /// Defines the table a header on `headerLine` names, creating the tables above it that do
    /// not exist yet; the keys that follow go into it.
    mutating func defineTable(_ path: [String], line headerLine: Int) throws(TOMLReader.Failure) {
        var table = 0
        for index in path.indices {
            let name = TOMLReader.keyPath(path[...index])
            guard let child = nodes[table].children[path[index]] else {
                table = addNode(Node(line: headerLine, value: nil, origin: index == path.count - 1 ? .header : .implicit),
                                key: path[index], to: table)
                continue
            }
            let existing = nodes[child]
            if existing.value != nil {
                throw TOMLReader.Failure(line: headerLine, message: "'\(name)' already has a value (line \(existing.line)); it cannot also be a table")
            }
            if index == path.count - 1 {
                switch existing.origin {
                case .implicit:
                    nodes[child].origin = .header
                    nodes[child].line = headerLine
                case .header, .root:
                    throw TOMLReader.Failure(line: headerLine, message: "the table [\(name)] is defined twice (first on line \(existing.line))")
                case .dotted:
                    throw TOMLReader.Failure(line: headerLine, message: "the table [\(name)] is already defined by the dotted keys on line \(existing.line); a table is defined once")
                }
            }
            table = child
        }
        section += 1
        sectionTable = table
        sectionPath = path
    }

    /// Sets a key of the current section, written on `keyLine`, creating the tables its dots name.
    mutating func insert(_ value: TOMLValue.Content, at path: [String], line keyLine: Int) throws(TOMLReader.Failure) {
        var table = sectionTable
        for index in path.indices {
            let name = TOMLReader.keyPath(sectionPath + path[...index])
            guard let child = nodes[table].children[path[index]] else {
                let node = index == path.count - 1 ? Node(line: keyLine, value: value, origin: .root)
                    : Node(line: keyLine, value: nil, origin: .dotted(section: section))
                table = addNode(node, key: path[index], to: table)
                continue
            }
            let existing = nodes[child]
            if index == path.count - 1 {
                if existing.value != nil {
                    throw TOMLReader.Failure(line: keyLine, message: "duplicate key '\(name)' (first set on line \(existing.line))")
                }
                throw TOMLReader.Failure(line: keyLine, message: "'\(name)' is already a table (line \(existing.line)); it cannot also be a value")
            }
            if existing.value != nil {
                throw TOMLReader.Failure(line: keyLine, message: "'\(name)' already has a value (line \(existing.line)); it cannot also be a table")
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
                throw TOMLReader.Failure(line: keyLine, message: "the table '\(name)' was defined by the dotted keys on line \(existing.line), under another header; a table's keys are written in one place")
            case .header, .root:
                throw TOMLReader.Failure(line: keyLine, message: "the table [\(name)] is defined by its header on line \(existing.line); write its keys there")
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
}
