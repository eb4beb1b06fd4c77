/// Writes an HTML document piece by piece, escaping every value it is given.
///
/// Markup comes only from the renderer's own literals (`raw`, tag and attribute names); every
/// value (text, attribute values) goes through `escaped(_:)`. Attribute values are always
/// double-quoted, so escaping `&`, `<`, `>`, `"` and `'` makes them safe in both contexts.
struct HTMLWriter {
    /// The document so far.
    private(set) var output = ""

    /// Markup the renderer wrote itself; never a value from the view.
    mutating func raw(_ markup: String) {
        output += markup
    }

    /// `value` as text.
    mutating func text(_ value: String) {
        output += Self.escaped(value)
    }

    /// An opening tag. An attribute whose value is nil is left out; a boolean attribute is
    /// written as `name=""`.
    mutating func open(_ tag: String, _ attributes: [(String, String?)] = []) {
        output += "<" + tag
        for (name, value) in attributes {
            guard let value else { continue }
            output += " " + name + "=\"" + Self.escaped(value) + "\""
        }
        output += ">"
    }

    /// A closing tag.
    mutating func close(_ tag: String) {
        output += "</" + tag + ">"
    }

    /// An element holding only `text`.
    mutating func element(_ tag: String, _ attributes: [(String, String?)] = [], text value: String) {
        open(tag, attributes)
        text(value)
        close(tag)
    }

    /// An element whose content `content` writes.
    mutating func element(_ tag: String, _ attributes: [(String, String?)] = [], _ content: (inout HTMLWriter) -> Void) {
        open(tag, attributes)
        content(&self)
        close(tag)
    }

    /// `value` safe in HTML text and in a double- or single-quoted attribute. Control characters
    /// (which HTML forbids, and which could hide text) become U+FFFD; tab, line feed and carriage
    /// return stay.
    static func escaped(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
