import AuthCore
import FoundationEssentials
import FoundationGaps

/// The signed-in user's second factors (`/factors`): enroll, challenge, verify, remove.
extension AccountOperations {
    /// Enrolls a factor; it stays unverified, and raises nothing, until a code of it is verified.
    /// With `user`, only on that user's session (`withServerCallToken`).
    public func enrollFactor(_ request: FactorEnrollmentRequest, ofUser user: String? = nil) async -> Result<FactorEnrollment, AccountFailure> {
        let result = await withServerCallToken(ofUser: user) { token throws(ServerFailure) in try await api.enrollFactor(accessToken: token, request) }
        if case .success(let factor) = result { logger.info("factor enrolled", metadata: ["factor.id": "\(factor.id)", "factor.type": "\(factor.type)"]) }
        return result
    }

    /// Creates a challenge of factor `id` (for a phone factor, the server sends its code now).
    /// With `user`, only on that user's session (`withServerCallToken`).
    public func challengeFactor(id: String, channel: String?, ofUser user: String? = nil) async -> Result<FactorChallenge, AccountFailure> {
        await withServerCallToken(ofUser: user) { token throws(ServerFailure) in
            try await api.challengeFactor(accessToken: token, factorID: id, channel: channel)
        }
    }

    /// Verifies `code` against challenge `challengeID` of factor `id`. The session comes back
    /// raised to `aal2` and replaces the current one (`SessionDriver.elevate`). With `user`,
    /// only that user's session.
    public func verifyFactor(id: String, challengeID: String, code: String, ofUser user: String? = nil) async -> Result<Void, AccountFailure> {
        let api = self.api
        let result = await session.elevate(ofUser: user) { token throws(ServerFailure) in
            try await api.verifyFactor(accessToken: token, factorID: id, challengeID: challengeID, code: code)
        }
        if case .failure(.server(let failure)) = result {
            logger.info("second factor refused", metadata: ["factor.id": "\(id)", "error": "\(failure.readableDescription)"])
        }
        return result
    }

    /// Removes factor `id`, then refreshes: the session's tokens may state a level it no longer has.
    public func unenrollFactor(id: String) async -> Result<Void, AccountFailure> {
        let result = await withServerCallToken { token throws(ServerFailure) in try await api.unenrollFactor(accessToken: token, factorID: id) }
        if case .success = result {
            logger.info("factor removed", metadata: ["factor.id": "\(id)"])
            await session.refreshNow()
        }
        return result
    }
}
