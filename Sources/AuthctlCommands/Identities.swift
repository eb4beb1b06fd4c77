import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials

/// `authctl identities`: the provider accounts linked to the signed-in user.
struct Identities: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "identities",
        abstract: "The sign-in identities linked to the account (email, phone, GitHub, Google, …): list, link, unlink.",
        discussion: """
        Linking adds a provider's account in the browser (the project must allow manual linking); the account can then \
        sign in with either. An anonymous user who links one becomes a permanent user. The last identity cannot be unlinked.
        """,
        subcommands: [List.self, Link.self, Unlink.self],
        defaultSubcommand: List.self)

    /// `authctl identities [list]`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the identities linked to the account.")

        @OptionGroup var global: GlobalOptions

        @Flag(help: "Print the identities as one JSON object.")
        var json = false

        func run() throws {
            try runReporting {
                try printAnswer(try global.call(Methods.ListIdentities.self, timeout: 60), json: json) { listed in
                    guard !listed.identities.isEmpty else { return ["No identities (an anonymous user): link one with 'authctl identities link PROVIDER'."] }
                    return listed.identities.map { identity in
                        let email = identity.email.map { "  \($0)" } ?? ""
                        return "\(identity.identityID)  \(identity.provider)\(email)".escapedForTerminal
                    }
                }
            }
        }
    }

    /// `authctl identities link PROVIDER`.
    struct Link: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Link a provider's account in the browser (PKCE, as 'authctl login --provider').")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The provider: github, google, apple, …")
        var provider: String

        @Option(help: "Extra provider scopes, space-separated.")
        var scopes: String?

        @OptionGroup var browser: BrowserFlowOptions

        @Flag(name: .customLong("no-browser"), help: "Print the URL instead of opening a browser (SSH, headless).")
        var noBrowser = false

        @Flag(help: "Print the resulting status as one JSON object.")
        var json = false

        func run() throws {
            try runReporting {
                let connection = try global.connect()
                let (profile, provider, scopes) = (global.profile, self.provider, self.scopes)
                let status = try BrowserSignIn(connection: connection, profile: profile, purpose: "link your \(provider) account",
                                               redirectURL: browser.redirectURL, openBrowser: !noBrowser, timeout: TimeInterval(browser.timeout)) { redirect in
                    .init(try connection.call(Methods.LinkIdentity.self, .init(profile: profile, provider: provider, redirectTo: redirect, scopes: scopes)))
                }.run()
                if json { try printJSON(status) }
                note("Linked \(provider.escapedForTerminal) to \((status.user?.displayName ?? "?").escapedForTerminal) (profile \(status.profile.escapedForTerminal)).")
            }
        }
    }

    /// `authctl identities unlink ID`.
    struct Unlink: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unlink an identity (by the id 'authctl identities' shows, or its provider).")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The identity's id, or its provider when the account has one identity of it.")
        var identity: String

        @Flag(help: "Print the result as one JSON object.")
        var json = false

        func run() throws {
            try runReporting {
                let connection = try global.connect()
                var id = identity
                if !Self.looksLikeAnID(identity) {
                    // A provider's name: the one identity of it.
                    let listed = try connection.call(Methods.ListIdentities.self, ProfileParameters(profile: global.profile), timeout: 60)
                    let matching = listed.identities.filter { $0.provider == identity }
                    guard matching.count == 1 else {
                        throw Failure(matching.isEmpty ? "the account has no \(identity) identity ('authctl identities' lists them)"
                                                       : "the account has several \(identity) identities: give the id ('authctl identities' lists them)", .failure)
                    }
                    id = matching[0].identityID
                }
                let removed = try connection.call(Methods.UnlinkIdentity.self, .init(profile: global.profile, identityID: id), timeout: 60)
                if json { try printJSON(removed) } else { note("Unlinked identity \(removed.identityID.escapedForTerminal).") }
            }
        }

        /// An identity id is a UUID (8-4-4-4-12 hex digits); anything else names a provider.
        static func looksLikeAnID(_ text: String) -> Bool {
            let groups = text.split(separator: "-", omittingEmptySubsequences: false)
            return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
        }
    }
}
