/// The forms of a rendered sign-in page, as a browser would send them: each form's action, its
/// hidden fields with their values and its other fields' names. The renderer writes every
/// attribute double-quoted, which is what this reads.
struct RenderedForm: Equatable, CustomStringConvertible {
    var action: String
    var hidden: [String: String]
    var visible: [String]

    static func read(_ html: String) -> [RenderedForm] {
        let tag = try! Regex(#"<(/?)(form|input)\b([^>]*)>"#)
        let attribute = try! Regex(#"([a-zA-Z-]+)="([^"]*)""#)
        var forms: [RenderedForm] = []
        var open: RenderedForm?
        for match in html.matches(of: tag) {
            let closing = match.output[1].substring == "/"
            let name = String(match.output[2].substring ?? "")
            var attributes: [String: String] = [:]
            for pair in String(match.output[3].substring ?? "").matches(of: attribute) {
                attributes[String(pair.output[1].substring ?? "")] = unescape(String(pair.output[2].substring ?? ""))
            }
            switch (name, closing) {
            case ("form", false): open = RenderedForm(action: attributes["action"] ?? "", hidden: [:], visible: [])
            case ("form", true):
                if let form = open { forms.append(form) }
                open = nil
            case ("input", false):
                guard let field = attributes["name"] else { continue }
                if attributes["type"] == "hidden" { open?.hidden[field] = attributes["value"] ?? "" } else { open?.visible.append(field) }
            default: break
            }
        }
        return forms
    }

    static func unescape(_ text: String) -> String {
        text.replacing("&lt;", with: "<").replacing("&gt;", with: ">").replacing("&quot;", with: "\"")
            .replacing("&#39;", with: "'").replacing("&amp;", with: "&")
    }

    var description: String { "\(action) hidden: \(hidden.keys.sorted()) visible: \(visible)" }
}
