import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// Handlers of the second-factor methods (`SecondFactorMethods`).
extension DaemonMethods {
    static func registerSecondFactorMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.EnrollFactor.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // `validate()` has let through only the kinds there are, with the fields each takes.
            let kind = FactorKind(rawValue: parameters.factorType) ?? .totp
            let request = FactorEnrollmentRequest(kind: kind, friendlyName: ParameterRules.shortText(parameters.friendlyName),
                                                  issuer: ParameterRules.shortText(parameters.issuer), phone: ParameterRules.shortText(parameters.phone))
            switch await profile.accounts.enrollFactor(request) {
            case .success(let factor):
                return .init(profile: profile.profile, factorID: factor.id, type: factor.type, friendlyName: factor.friendlyName,
                             totp: factor.totp.map { .init(uri: $0.uri, secret: $0.secret, qrCode: $0.qrCode) }, phone: factor.phone)
            case .failure(let failure): throw SecondFactorErrorText.error(failure)
            }
        }

        table.register(Methods.ChallengeFactor.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let factorID = canonicalID(parameters.factorID)
            switch await profile.accounts.challengeFactor(id: factorID, channel: parameters.channel) {
            case .success(let challenge):
                return .init(factorID: factorID, challengeID: challenge.id, type: challenge.type, expiresAt: challenge.expiresAt)
            case .failure(let failure): throw SecondFactorErrorText.error(failure)
            }
        }

        table.register(Methods.VerifyFactor.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let factorID = canonicalID(parameters.factorID)
            let code = parameters.code.trimmingWhitespace()
            let challengeID: String
            if let given = parameters.challengeID {
                challengeID = canonicalID(given)
            } else {
                switch await profile.accounts.challengeFactor(id: factorID, channel: nil) {
                case .failure(let failure): throw SecondFactorErrorText.error(failure)
                case .success(let challenge) where challenge.type != FactorKind.totp.rawValue:
                    // A phone factor's code belongs to the challenge that sent it; this one just sent another.
                    // (The one check left here: it needs the server's answer.)
                    throw ParameterRules.invalid("a \(challenge.type) factor's code belongs to the challenge that sent it: a new code was just sent for challenge \(challenge.id); verify that one with 'challenge_id'")
                case .success(let challenge): challengeID = challenge.id
                }
            }
            switch await profile.accounts.verifyFactor(id: factorID, challengeID: challengeID, code: code) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SecondFactorErrorText.error(failure)
            }
        }

        table.register(Methods.UnenrollFactor.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let factorID = canonicalID(parameters.factorID)
            switch await profile.accounts.unenrollFactor(id: factorID) {
            case .success: return .init(profile: profile.profile, factorID: factorID)
            case .failure(let failure): throw SecondFactorErrorText.error(failure)
            }
        }

        table.register(Methods.ListFactors.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.accounts.user() {
            case .failure(let failure): throw SecondFactorErrorText.error(failure)
            case .success(let record):
                let factors = record.factors.map { factor in
                    Methods.ListFactors.Factor(id: factor.id, type: factor.type, friendlyName: factor.friendlyName, status: factor.status,
                                               phone: factor.phone, createdAt: factor.createdAt)
                }
                let aal = await profile.session.status().aal
                // The level the user can reach, from this fresh list rather than the one kept with the session.
                let verified = record.factors.contains(where: \.isVerified)
                let next = aal.map { verified ? max(AssuranceLevel(rawValue: $0), .aal2).rawValue : $0 }
                return .init(profile: profile.profile, factors: factors, aal: aal, nextAal: next)
            }
        }
    }

    /// A factor's or challenge's id in the canonical form the server is sent, from text its
    /// parameters' `validate()` has checked is a UUID once trimmed (`ParameterRules.checkFactorID`).
    private static func canonicalID(_ text: String) -> String {
        let trimmed = text.trimmingWhitespace()
        return FactorID.canonical(trimmed) ?? trimmed
    }
}
