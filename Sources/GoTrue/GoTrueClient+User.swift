import AuthCore
import FoundationEssentials

/// The signed-in user: read, changed, and asked to reauthenticate.
extension GoTrueClient {
    /// `GET /user`.
    public func user(accessToken: String) async throws(ServerFailure) -> UserRecord {
        try Answer.User.record(try await send("GET", "user", bearer: accessToken))
    }

    /// `PUT /user`.
    public func updateUser(accessToken: String, _ changes: UserChanges) async throws(ServerFailure) -> UserRecord {
        let body = RequestBody.UserUpdate(email: changes.email, phone: changes.phone, password: changes.password, nonce: changes.nonce,
                                  data: try metadataValue(changes.metadata))
        return try Answer.User.record(try await send("PUT", "user", body: body, bearer: accessToken))
    }

    /// `GET /reauthenticate`.
    public func reauthenticate(accessToken: String) async throws(ServerFailure) {
        _ = try await send("GET", "reauthenticate", bearer: accessToken)
    }
}
