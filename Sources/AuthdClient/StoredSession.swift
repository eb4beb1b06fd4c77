import FoundationEssentials
import FoundationGaps

/// The session an app kept before it used authd, as Supabase's client libraries store it: what
/// `authctl login --with-session` and `AuthdClient.signIn(refreshToken:)` take over.
public enum StoredSession {
    /// The refresh token in `text`: a bare token, or a stored session's JSON. supabase-js keeps
    /// the session object itself (`{"access_token":…,"refresh_token":…}`), supabase-swift wraps
    /// it as `{"session":{…}}` and supabase-js 1.x as `{"currentSession":{…}}`. Nil when `text`
    /// is JSON without a refresh token; surrounding white space is ignored.
    public static func refreshToken(in text: String) -> String? {
        let trimmed = text.trimmingWhitespace()
        guard trimmed.hasPrefix("{") else { return trimmed.isEmpty ? nil : trimmed }
        guard let stored = try? JSONDecoder().decode(Wrapper.self, from: Data(trimmed.utf8)) else { return nil }
        return [stored.refresh_token, stored.session?.refresh_token, stored.currentSession?.refresh_token]
            .compactMap { $0 }.first { !$0.isEmpty }
    }

    /// The session object, and the two wrappers it is stored in (JSONDecoder rather than
    /// JSONSerialization: the former is in FoundationEssentials too).
    private struct Wrapper: Decodable {
        var refresh_token: String?
        var session: Session?
        var currentSession: Session?
    }

    private struct Session: Decodable {
        var refresh_token: String?
    }
}
