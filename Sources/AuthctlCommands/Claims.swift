import ArgumentParser
import AuthdClient
import AuthProtocol
import FoundationEssentials

/// `authctl claims`: what the access token says about the session, and whether authd could
/// verify it with the project's published keys. Never the token itself.
struct Claims: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the access token's claims (user, role, aal, expiry) and whether they were verified with the project's keys.",
        discussion: """
        Tokens of a project with asymmetric JWT signing keys (ES256, RS256) are checked against the keys it publishes \
        (/auth/v1/.well-known/jwks.json, cached as the server says); HS256 tokens are signed with a secret only the \
        server holds and are shown unverified. Exit 0 when verified, 1 when not.
        """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the claims and the verification as one JSON object.")
    var json = false

    func run() throws {
        try runReporting {
            let result = try global.call(Methods.Claims.self, timeout: 60)
            try printAnswer(result, json: json, lines: Self.lines)
            if !result.verified { throw ExitCode(1) }
        }
    }

    /// The claims people look for, one per line (`printLines` escapes what the server put in them).
    static func lines(_ result: Methods.Claims.Result) -> [String] {
        let claims = result.claims
        func text(_ key: String) -> String? { claims[key]?.stringValue }
        var lines = ["Verified:   \(result.verified ? "yes" : "no"): \(result.detail)"]
        lines.append("Algorithm:  \(result.algorithm)\(result.keyID.map { " (key \($0))" } ?? "")")
        if let subject = text("sub") { lines.append("Subject:    \(subject)") }
        if let email = text("email"), !email.isEmpty { lines.append("Email:      \(email)") }
        if let role = text("role") { lines.append("Role:       \(role)") }
        if let level = text("aal") { lines.append("Assurance:  \(level)") }
        if case .array(let methods)? = claims["amr"] {
            let names = methods.compactMap { $0["method"]?.stringValue }
            if !names.isEmpty { lines.append("Methods:    \(names.joined(separator: ", "))") }
        }
        if let session = text("session_id") { lines.append("Session:    \(session)") }
        let expiry: Double?
        switch claims["exp"] {
        case .integer(let seconds)?: expiry = Double(seconds)
        case .number(let seconds)?: expiry = seconds
        default: expiry = nil
        }
        if let expiry, expiry.isFinite, abs(expiry) < 1e11 {
            lines.append("Expires:    \(Date(timeIntervalSince1970: expiry).formatted(.iso8601))")
        }
        return lines
    }
}
