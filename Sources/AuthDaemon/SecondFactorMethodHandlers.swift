import AuthCore
import AuthProtocol
import FoundationEssentials
import FoundationGaps

/// Handlers of the second-factor methods (`SecondFactorMethods`).
extension DaemonMethods {
    static func registerSecondFactorMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.EnrollFactor.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            guard let kind = FactorKind(rawValue: parameters.factorType) else { throw invalidParams("'factor_type' must be totp or phone") }
            let name = try shortText(parameters.friendlyName, "friendly_name")
            let issuer = try shortText(parameters.issuer, "issuer")
            let phone = try shortText(parameters.phone, "phone")
            switch kind {
            case .phone where phone == nil: throw invalidParams("a phone factor needs 'phone', the number in E.164 form (+15551234567)")
            case .totp where phone != nil: throw invalidParams("'phone' is for phone factors")
            case .phone where issuer != nil: throw invalidParams("'issuer' is for TOTP factors")
            default: break
            }
            let request = FactorEnrollmentRequest(kind: kind, friendlyName: name, issuer: issuer, phone: phone)
            switch await profile.accounts.enrollFactor(request) {
            case .success(let factor):
                return .init(profile: profile.profile, factorID: factor.id, type: factor.type, friendlyName: factor.friendlyName,
                             totp: factor.totp.map { .init(uri: $0.uri, secret: $0.secret, qrCode: $0.qrCode) }, phone: factor.phone)
            case .failure(let failure): throw SecondFactorErrorText.error(failure)
            }
        }

        table.register(Methods.ChallengeFactor.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let factorID = try factorID(parameters.factorID, "factor_id")
            if let channel = parameters.channel, !["sms", "whatsapp"].contains(channel) { throw invalidParams("'channel' must be sms or whatsapp") }
            switch await profile.accounts.challengeFactor(id: factorID, channel: parameters.channel) {
            case .success(let challenge):
                return .init(factorID: factorID, challengeID: challenge.id, type: challenge.type, expiresAt: challenge.expiresAt)
            case .failure(let failure): throw SecondFactorErrorText.error(failure)
            }
        }

        table.register(Methods.VerifyFactor.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let factorID = try factorID(parameters.factorID, "factor_id")
            let code = parameters.code.trimmingWhitespace()
            guard !code.isEmpty, code.count <= 64 else { throw invalidParams("'code' must be the factor's current code") }
            let challengeID: String
            if let given = parameters.challengeID {
                challengeID = try Self.factorID(given, "challenge_id")
            } else {
                switch await profile.accounts.challengeFactor(id: factorID, channel: nil) {
                case .failure(let failure): throw SecondFactorErrorText.error(failure)
                case .success(let challenge) where challenge.type != FactorKind.totp.rawValue:
                    // A phone factor's code belongs to the challenge that sent it; this one just sent another.
                    throw invalidParams("a \(challenge.type) factor's code belongs to the challenge that sent it: a new code was just sent for challenge \(challenge.id); verify that one with 'challenge_id'")
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
            let factorID = try factorID(parameters.factorID, "factor_id")
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

    /// A factor's or challenge's id: a UUID, as GoTrue's are (it goes into the request's path).
    private static func factorID(_ text: String, _ field: String) throws(RPCErrorObject) -> String {
        guard let id = FactorID.canonical(text.trimmingWhitespace()) else {
            throw invalidParams("'\(field)' must be a factor's id as 'authctl mfa list' shows it (a UUID)")
        }
        return id
    }

    /// An optional short text field: trimmed, nil when empty, at most 256 characters.
    private static func shortText(_ text: String?, _ field: String) throws(RPCErrorObject) -> String? {
        guard let trimmed = text?.trimmingWhitespace(), !trimmed.isEmpty else { return nil }
        guard trimmed.count <= 256 else { throw invalidParams("'\(field)' must be at most 256 characters") }
        return trimmed
    }
}
