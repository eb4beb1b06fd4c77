import AuthCore
import FoundationEssentials

/// Second factors: enrolled, challenged, verified and removed.
extension GoTrueClient {
    /// `POST /factors`.
    public func enrollFactor(accessToken: String, _ request: FactorEnrollmentRequest) async throws(ServerFailure) -> FactorEnrollment {
        let body = RequestBody.FactorEnroll(factorType: request.kind.rawValue, friendlyName: request.friendlyName, issuer: request.issuer,
                                            phone: request.phone)
        return try Answer.Enrollment.enrollment(try await send("POST", "factors", body: body, bearer: accessToken), for: request)
    }

    /// `POST /factors/{id}/challenge`.
    public func challengeFactor(accessToken: String, factorID: String, channel: String?) async throws(ServerFailure) -> FactorChallenge {
        let path = try Self.factorPath(factorID, "challenge")
        let body = RequestBody.FactorChallenge(channel: channel)
        return try Answer.Challenge.challenge(try await send("POST", path, body: body, bearer: accessToken))
    }

    /// `POST /factors/{id}/verify`.
    public func verifyFactor(accessToken: String, factorID: String, challengeID: String, code: String) async throws(ServerFailure) -> SessionGrant {
        let path = try Self.factorPath(factorID, "verify")
        let body = RequestBody.FactorVerify(challengeID: challengeID, code: code)
        return try Answer.Session.grant(try await send("POST", path, body: body, bearer: accessToken))
    }

    /// `DELETE /factors/{id}`.
    public func unenrollFactor(accessToken: String, factorID: String) async throws(ServerFailure) {
        _ = try await send("DELETE", try Self.factorPath(factorID, nil), bearer: accessToken)
    }

    /// `factors/{id}[/action]`. The id goes into the path, so it must be a UUID, as GoTrue's are:
    /// nothing else can steer the request to another endpoint.
    static func factorPath(_ id: String, _ action: String?) throws(ServerFailure) -> String {
        guard let id = FactorID.canonical(id) else { throw .notSent(url: "factors", detail: "a factor id must be a UUID") }
        return "factors/\(id)" + (action.map { "/\($0)" } ?? "")
    }
}
