import Foundation

/// A user of the development server.
struct DevUser: Sendable {
    var id: String
    var email: String
    var passwordDigest: String
    /// `user_metadata` as JSON, so the store stays `Sendable`.
    var userMetadataJSON: Data
    var createdAt: Date
    var updatedAt: Date
    var lastSignInAt: Date?
}

/// A session row.
struct DevSession: Sendable {
    var id: String
    var userID: String
    var createdAt: Date
}

/// A refresh token row. `parent` is the token it was rotated from.
struct DevRefreshToken: Sendable {
    var token: String
    var sessionID: String
    var parent: String?
    var revokedAt: Date?
}

/// All server state, in memory.
struct DevStore: Sendable {
    var users: [String: DevUser] = [:]              // by id
    var sessions: [String: DevSession] = [:]        // by id
    var refreshTokens: [String: DevRefreshToken] = [:]
    /// The one unrevoked token of each session.
    var activeToken: [String: String] = [:]          // session id -> token
    /// Counters the tests read through `/admin/dev/stats`.
    var refreshGrants = 0
    /// An injected failure for refresh grants, set through `/admin/dev/faults`.
    var refreshFault: DevFault?

    func user(email: String) -> DevUser? {
        users.values.first { $0.email.caseInsensitiveCompare(email) == .orderedSame }
    }

    /// Removes a session and every refresh token it ever had.
    mutating func deleteSession(_ id: String) {
        sessions[id] = nil
        activeToken[id] = nil
        refreshTokens = refreshTokens.filter { $0.value.sessionID != id }
    }
}

extension DevUser {
    /// `user_metadata` decoded.
    var userMetadata: [String: Any] {
        (try? JSONSerialization.jsonObject(with: userMetadataJSON)) as? [String: Any] ?? [:]
    }
}
