import AuthCore
import FoundationEssentials
import FoundationGaps

/// What the project publishes about its sign-in methods.
extension GoTrueClient {
    /// `GET /settings`: the sign-in methods the project enables, read leniently
    /// (`SettingsAnswer`).
    public func settings() async throws(ServerFailure) -> ProjectSettings {
        try SettingsAnswer.settings(try await send("GET", "settings"))
    }
}

/// `GET /settings` as authd reads it. The answer only decides what a sign-in page offers, so
/// it is read member by member: one that is missing or not a boolean offers nothing (a method
/// counts as not enabled, and sign-ups as disabled unless `disable_signup` is `false`), and an
/// `external` that is not an object enables no method or provider, instead of failing the
/// whole page. Only an answer that is not a JSON object at all is refused.
enum SettingsAnswer {
    /// The longest provider name taken; GoTrue's are short words (`linkedin_oidc`).
    static let maximumProviderLength = 64

    /// The settings `data` holds.
    static func settings(_ data: Data) throws(ServerFailure) -> ProjectSettings {
        guard let answer = try? JSONValue(parsing: data), let members = answer.objectValue else {
            throw .invalidResponse(detail: "the project's settings are not a JSON object")
        }
        let external = members["external"]?.objectValue ?? [:]
        func flag(_ value: JSONValue?) -> Bool { value == .bool(true) }
        let providers = external.filter { name, value in
            flag(value) && ProjectSettings.isOAuthProvider(name) && isProviderName(name)
        }.keys
        return ProjectSettings(emailEnabled: flag(external["email"]), phoneEnabled: flag(external["phone"]),
                               signUpDisabled: members["disable_signup"] != .bool(false),
                               emailAutoconfirm: flag(members["mailer_autoconfirm"]),
                               phoneAutoconfirm: flag(members["phone_autoconfirm"]),
                               singleSignOnEnabled: flag(members["saml_enabled"]),
                               anonymousSignInsEnabled: flag(external["anonymous_users"]),
                               oauthProviders: Array(providers))
    }

    /// Whether `name` reads as a provider GoTrue's `/authorize` takes: ASCII letters, digits,
    /// `_` and `-`, not too long. Anything else is no provider of this project's, and would be
    /// put into a URL and a page.
    static func isProviderName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maximumProviderLength && name.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
        }
    }
}
