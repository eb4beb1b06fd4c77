/// The tags of a rendered page, read the way a browser would read ours: the renderer writes every
/// attribute double-quoted and escapes `<` everywhere else, so a tag is `<name attr="value" ...>`.
/// Good enough to inspect our own output, and strict: anything it cannot read is reported.
struct HTMLTag: Equatable {
    var name: String
    var isClosing: Bool
    var attributes: [(name: String, value: String)]

    static func == (a: HTMLTag, b: HTMLTag) -> Bool {
        a.name == b.name && a.isClosing == b.isClosing && a.attributes.map(\.name) == b.attributes.map(\.name)
            && a.attributes.map(\.value) == b.attributes.map(\.value)
    }

    subscript(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    func has(_ name: String) -> Bool { self[name] != nil }

    /// The tags of `html`, and the places where a `<` did not start a tag this reader understands.
    static func read(_ html: String) -> (tags: [HTMLTag], unreadable: [String]) {
        let tagPattern = try! Regex(#"^<(/?)([a-zA-Z][a-zA-Z0-9]*)((?:\s+[a-zA-Z-]+="[^"<>]*")*)\s*>"#)
        let attributePattern = try! Regex(#"([a-zA-Z-]+)="([^"]*)""#)
        var tags: [HTMLTag] = []
        var unreadable: [String] = []
        var rest = Substring(html)
        while let start = rest.firstIndex(of: "<") {
            rest = rest[start...]
            if rest.hasPrefix("<!DOCTYPE html>") {
                rest = rest.dropFirst(15)
                continue
            }
            guard let match = rest.prefixMatch(of: tagPattern) else {
                unreadable.append(String(rest.prefix(40)))
                rest = rest.dropFirst()
                continue
            }
            let text = rest[match.range]
            let name = String(match.output[2].substring ?? "").lowercased()
            let attributes = String(match.output[3].substring ?? "").matches(of: attributePattern).map {
                (name: String($0.output[1].substring ?? "").lowercased(), value: unescape(String($0.output[2].substring ?? "")))
            }
            tags.append(HTMLTag(name: name, isClosing: match.output[1].substring == "/", attributes: attributes))
            rest = rest[text.endIndex...]
            // The style's content is CSS, not markup (it has no `<`, which the style test checks).
        }
        return (tags, unreadable)
    }

    /// An attribute's or a text's value as the browser sees it, for the entities the renderer writes.
    static func unescape(_ text: String) -> String {
        text.replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&#39;", with: "'").replacing("&amp;", with: "&")
    }
}
