/// Everything one sign-in page shows, and nothing it must look up: the renderer
/// (`SignInPageRenderer.render(_:)`) is a pure function of this value.
///
/// Secrets never enter it: there is no place for a password, a code or a token. The values it
/// does carry (the project's name, an email, a provider's name, an error message) come from
/// configuration, the server or the user, and are escaped wherever they are written.
public struct SignInPageView: Sendable, Equatable {
    /// The project the user signs in to, named at the top of every page.
    public var project: Project
    /// What the page asks or says.
    public var step: Step
    /// A problem with the last answer, in plain words, shown next to the field it concerns.
    public var error: Problem?
    /// The per-page token every form carries back in a hidden field (`Field.csrfToken`),
    /// which the server compares with the one it issued for this page.
    public var csrfToken: String
    /// Where each form posts to.
    public var actions: FormActions
    /// The page's language (`<html lang>`); the texts themselves are English for now.
    public var language: String

    /// A page of `step` for `project`, with its forms posting to `actions`.
    public init(project: Project, step: Step, error: Problem? = nil, csrfToken: String,
                actions: FormActions = FormActions(), language: String = "en") {
        self.project = project
        self.step = step
        self.error = error
        self.csrfToken = csrfToken
        self.actions = actions
        self.language = language
    }
}

extension SignInPageView {
    /// The project named at the top of the page, so the user knows where they are signing in.
    public struct Project: Sendable, Equatable {
        /// The name people know the project by (the profile's display name, or its name).
        public var name: String
        /// The host of the project's Supabase URL (`abcd.supabase.co`), the place the password goes.
        public var host: String

        /// A project called `name` whose auth server is on `host`.
        public init(name: String, host: String) {
            self.name = name
            self.host = host
        }
    }

    /// A problem with what the user just sent, in plain words ("That password is not right").
    public struct Problem: Sendable, Equatable {
        /// The message, shown as text: one or two sentences that say what to do next.
        public var message: String
        /// The field it concerns: the message is shown under that field and linked to it with
        /// `aria-describedby`. Without one (or when the page has no such field) it heads the form.
        public var field: Field?

        /// `message` about `field`, or about the page as a whole.
        public init(_ message: String, field: Field? = nil) {
            self.message = message
            self.field = field
        }
    }
}
