/// The pieces every step is built from: forms with their CSRF field, labelled fields, buttons.
extension SignInPageRenderer {
    /// How a field is filled in: its input type, what `autocomplete` tells a password manager, and
    /// which keyboard a phone shows.
    struct FieldKind {
        var type: String
        var autocomplete: String
        var inputMode: String? = nil

        static let signInEmail = FieldKind(type: "email", autocomplete: "username", inputMode: "email")
        static let email = FieldKind(type: "email", autocomplete: "email", inputMode: "email")
        static let currentPassword = FieldKind(type: "password", autocomplete: "current-password")
        static let newPassword = FieldKind(type: "password", autocomplete: "new-password")
        static let code = FieldKind(type: "text", autocomplete: "one-time-code", inputMode: "numeric")
        static let phone = FieldKind(type: "tel", autocomplete: "tel", inputMode: "tel")
        static let domain = FieldKind(type: "text", autocomplete: "off", inputMode: "url")
    }

    /// A form posting to `action`, with the page's CSRF token.
    mutating func form(_ action: String, hidden: [(SignInPageView.Field, String)] = [], className: String? = nil,
                       _ content: (inout SignInPageRenderer) -> Void) {
        html.open("form", [("method", "post"), ("action", Self.sameOriginPath(action)), ("class", className)])
        html.raw("\n")
        hiddenField(.csrfToken, view.csrfToken)
        for (field, value) in hidden { hiddenField(field, value) }
        content(&self)
        html.raw("</form>\n")
    }

    /// `path` if it is a path on this server (`/…`, not `//host/…`); else `/`, so that a mistaken
    /// action can neither post the page's fields elsewhere nor be a `javascript:` URL. Browsers
    /// drop tabs and line breaks from a URL and read `\` as `/`, so a path with any of them is
    /// refused whole (`/\t/host` is `//host`).
    static func sameOriginPath(_ path: String) -> String {
        let unsafe = path.unicodeScalars.contains { $0 == "\\" || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        return path.hasPrefix("/") && !path.hasPrefix("//") && !unsafe ? path : "/"
    }

    private mutating func hiddenField(_ field: SignInPageView.Field, _ value: String) {
        html.open("input", [("type", "hidden"), ("name", field.rawValue), ("value", value)])
        html.raw("\n")
    }

    /// A labelled field. `value` is written only for a field that may be pre-filled (never a
    /// password or a code).
    mutating func field(_ field: SignInPageView.Field, label: String, _ kind: FieldKind, value: String = "",
                        hint: String? = nil, required: Bool = true) {
        fieldsWritten.append(field)
        let id = "f-" + field.rawValue
        let hintID = hint == nil ? nil : id + "-hint"
        let hasError = view.error != nil && (errorField == nil || errorField == field)
        let describedBy = [hintID, hasError ? Self.errorID : nil].compactMap { $0 }.joined(separator: " ")
        let prefilled = field.mayBePrefilled && !value.isEmpty
        if prefilled { fieldsPrefilled.insert(field) }
        let isText = kind.type == "text" || kind.type == "email" || kind.type == "tel"
        html.raw("<div class=\"field\">\n")
        html.element("label", [("for", id)], text: label)
        html.raw("\n")
        html.open("input", [
            ("id", id), ("name", field.rawValue), ("type", kind.type), ("autocomplete", kind.autocomplete),
            ("inputmode", kind.inputMode),
            ("value", prefilled ? value : nil),
            ("required", required ? "" : nil),
            ("autofocus", field == focus ? "" : nil),
            // Addresses, codes and domains are not words: no capitals, no spelling marks.
            ("autocapitalize", isText ? "none" : nil),
            ("spellcheck", isText ? "false" : nil),
            ("aria-invalid", hasError && errorField == field ? "true" : nil),
            ("aria-describedby", describedBy.isEmpty ? nil : describedBy),
        ])
        html.raw("\n")
        if let hint, let hintID {
            html.element("p", [("id", hintID), ("class", "hint")], text: hint)
            html.raw("\n")
        }
        if errorField == field { writeError() }
        html.raw("</div>\n")
    }

    /// The account's email in a hidden field, which tells a password manager whose password the
    /// new one is.
    mutating func usernameForPasswordManagers(_ email: String) {
        // Without an address there is no user name to save the password under.
        guard !email.isEmpty else { return }
        html.open("input", [("type", "email"), ("name", "username"), ("autocomplete", "username"),
                            ("value", email), ("hidden", ""), ("readonly", "")])
        html.raw("\n")
    }

    /// The form's main button.
    mutating func primaryButton(_ label: String) {
        html.element("button", [("type", "submit"), ("class", "primary")], text: label)
        html.raw("\n")
    }

    /// A full-width button of lesser weight (an OAuth provider, SSO).
    mutating func secondaryButton(_ label: String) {
        html.element("button", [("type", "submit"), ("class", "secondary")], text: label)
        html.raw("\n")
    }

    /// The page's other actions, each a small form with a button that looks like a link.
    mutating func moreActions(_ actions: [(label: String, action: Action)]) {
        guard !actions.isEmpty else { return }
        html.raw("<div class=\"more\">\n")
        for (label, action) in actions {
            switch action {
            case .go(let destination):
                form(view.actions.go, hidden: [(.to, destination.rawValue)]) { $0.linkButton(label) }
            case .post(let path):
                form(path) { $0.linkButton(label) }
            }
        }
        html.raw("</div>\n")
    }

    private mutating func linkButton(_ label: String) {
        html.element("button", [("type", "submit"), ("class", "link")], text: label)
        html.raw("\n")
    }

    /// What a secondary action does.
    enum Action {
        /// Shows another page of the flow.
        case go(SignInPageView.Destination)
        /// Posts to a path (send again, cancel).
        case post(String)
    }

    /// The page's heading and the sentence under it.
    mutating func heading(_ title: String, _ lead: String? = nil) {
        html.element("h1", text: title)
        html.raw("\n")
        if let lead {
            html.element("p", [("class", "lead")], text: lead)
            html.raw("\n")
        }
    }

    /// A sentence with one value in bold (an address the code went to).
    mutating func lead(_ before: String, _ value: String, _ after: String) {
        html.raw("<p class=\"lead\">")
        html.text(before)
        html.element("strong", text: value)
        html.text(after)
        html.raw("</p>\n")
    }
}
