import SignInPage
import Testing

/// What every page must be, checked on every step: labelled fields that a password manager
/// understands, a CSRF token in every form, nothing that runs or loads.
@Suite struct SignInPageStructureTests {
    static let names = SignInPageSamples.all.map(\.name)

    static func page(_ name: String) -> (view: SignInPageView, html: String, tags: [HTMLTag]) {
        let view = SignInPageSamples.all.first { $0.name == name }!.view
        let html = SignInPageRenderer.render(view)
        let (tags, unreadable) = HTMLTag.read(html)
        #expect(unreadable.isEmpty, "\(name): unreadable markup \(unreadable)")
        return (view, html, tags)
    }

    /// The inputs a person fills in (not the hidden ones).
    static func visibleInputs(_ tags: [HTMLTag]) -> [HTMLTag] {
        tags.filter { $0.name == "input" && $0["type"] != "hidden" && !$0.has("hidden") }
    }

    @Test(arguments: names) func theDocumentHasALanguageATitleNamingTheProjectAndItsStylesheet(_ name: String) {
        let (view, html, tags) = Self.page(name)
        #expect(html.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"))
        #expect(tags.filter { $0.name == "html" && !$0.isClosing }.count == 1)
        let title = html.firstRange(of: "<title>").map { html[$0.upperBound...].prefix { $0 != "<" } }
        #expect(title?.hasSuffix(" – " + view.project.name) == true)
        #expect(html.contains("<style>" + SignInPageStyle.stylesheet + "</style>"))
        #expect(tags.filter { $0.name == "h1" && !$0.isClosing }.count == 1)
        #expect(html.contains(view.project.host))
    }

    @Test(arguments: names) func nothingRunsAndNothingLoads(_ name: String) {
        let (view, html, tags) = Self.page(name)
        let allowed: Set = ["html", "head", "meta", "title", "style", "body", "main", "header", "footer", "div", "p",
                            "h1", "form", "input", "label", "button", "strong", "span", "img", "a", "svg", "circle", "path"]
        for tag in tags {
            #expect(allowed.contains(tag.name), "\(name): <\(tag.name)>")
            for attribute in tag.attributes {
                #expect(!attribute.name.hasPrefix("on"), "\(name): event handler \(attribute.name)")
                #expect(attribute.name != "style", "\(name): inline style (the CSP allows only the stylesheet)")
                #expect(!attribute.value.lowercased().contains("javascript:"), "\(name): \(attribute)")
            }
            if let tabIndex = tag["tabindex"] { #expect(Int(tabIndex)! <= 0, "\(name): positive tabindex") }
            if let source = tag["src"] { #expect(source.hasPrefix("data:image/svg+xml"), "\(name): loads \(source)") }
            if let action = tag["action"] { #expect(action.hasPrefix("/") && !action.hasPrefix("//"), "\(name): posts to \(action)") }
            if let target = tag["href"] {
                #expect(name.contains("leaving") && tag.name == "a" && target.hasPrefix("https://"), "\(name): links to \(target)")
            }
        }
        #expect(!html.lowercased().contains("<script"))
        // A page moves on by itself only when waiting (it reloads) or leaving (to the provider).
        let refreshes = tags.filter { $0["http-equiv"] != nil }.map { $0["content"] ?? "" }
        switch view.step {
        case .waiting: #expect(refreshes == ["2"])
        case .leaving(let destination, _): #expect(refreshes == ["0; url=" + destination])
        default: #expect(refreshes.isEmpty, "\(name)")
        }
    }

    @Test(arguments: names) func everyFormPostsTheCSRFTokenAndEveryButtonIsInAForm(_ name: String) {
        let (view, _, tags) = Self.page(name)
        var inForm = false
        var formHasToken = false
        for tag in tags {
            switch (tag.name, tag.isClosing) {
            case ("form", false):
                #expect(!inForm, "\(name): nested form")
                #expect(tag["method"] == "post")
                inForm = true
                formHasToken = false
            case ("form", true):
                #expect(formHasToken, "\(name): a form without the CSRF token")
                inForm = false
            case ("input", _) where tag["type"] == "hidden" && tag["name"] == "csrf_token":
                #expect(tag["value"] == view.csrfToken)
                formHasToken = true
            case ("input", _), ("button", false):
                #expect(inForm, "\(name): <\(tag.name)> outside a form")
                if tag.name == "button" { #expect(tag["type"] == "submit") }
            default:
                break
            }
        }
    }

    @Test(arguments: names) func everyFieldHasALabelAndTheRightAutocomplete(_ name: String) {
        let (_, _, tags) = Self.page(name)
        let labelled = Set(tags.filter { $0.name == "label" }.compactMap { $0["for"] })
        let ids = tags.compactMap { $0["id"] }
        #expect(Set(ids).count == ids.count, "\(name): duplicate ids")
        let expected: [String: (type: String, autocomplete: Set<String>, inputMode: String?)] = [
            "email": ("email", ["username", "email"], "email"),
            "password": ("password", ["current-password"], nil),
            "new_password": ("password", ["new-password"], nil),
            "code": ("text", ["one-time-code"], "numeric"),
            "phone": ("tel", ["tel"], "tel"),
            "domain": ("text", ["off"], "url"),
        ]
        for input in Self.visibleInputs(tags) {
            let id = input["id"] ?? ""
            #expect(labelled.contains(id), "\(name): no <label for=\"\(id)\">")
            guard let field = expected[input["name"] ?? ""] else {
                Issue.record("\(name): unknown field \(input)")
                continue
            }
            #expect(input["type"] == field.type, "\(name): \(input)")
            #expect(field.autocomplete.contains(input["autocomplete"] ?? ""), "\(name): \(input)")
            #expect(input["inputmode"] == field.inputMode, "\(name): \(input)")
            if input["type"] == "password" || input["name"] == "code" {
                #expect(!input.has("value"), "\(name): a secret field with a value")
            }
        }
        #expect(tags.filter { $0.has("autofocus") }.count <= 1)
    }

    @Test(arguments: names) func theErrorIsAnAlertThatItsFieldsPointTo(_ name: String) {
        let (view, _, tags) = Self.page(name)
        let alerts = tags.filter { $0["role"] == "alert" }
        guard let error = view.error else {
            #expect(alerts.isEmpty)
            return
        }
        #expect(alerts.count == 1 && alerts.first?["id"] == "error")
        let inputs = Self.visibleInputs(tags)
        let pointing = inputs.filter { $0["aria-describedby"]?.split(separator: " ").contains("error") == true }
        if let field = error.field, inputs.contains(where: { $0["name"] == field.rawValue }) {
            #expect(pointing.map { $0["name"] } == [field.rawValue])
            #expect(pointing.first?["aria-invalid"] == "true")
            #expect(pointing.first?.has("autofocus") == true)
        } else {
            #expect(pointing.count == inputs.count)
        }
    }

    @Test func aFieldsErrorIsWrittenRightUnderIt() throws {
        let html = SignInPageRenderer.render(SignInPageSamples.view(.signUp(),
                                                                    error: SignInPageView.Problem("Too short.", field: .newPassword)))
        let field = try #require(html.firstRange(of: "id=\"f-new_password\""))
        let error = try #require(html.firstRange(of: "role=\"alert\">Too short."))
        #expect(field.upperBound < error.lowerBound)
        #expect(!html[field.upperBound..<error.lowerBound].contains("<input"))
    }
}
