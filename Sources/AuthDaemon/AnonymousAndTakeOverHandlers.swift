import AuthCore
import AuthProtocol

/// Handlers of `session.signInAnonymously` and `session.signInWithRefreshToken`.
extension DaemonMethods {
    static func registerAnonymousAndTakeOverMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.SignInAnonymously.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let credential = SignInCredential.anonymous(metadata: try encodeMetadata(parameters.data))
            switch await profile.accounts.signIn(credential, captchaToken: parameters.captchaToken) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .anonymous)
            }
        }

        table.register(Methods.SignInWithRefreshToken.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.accounts.takeOver(refreshToken: parameters.refreshToken) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .takeOver)
            }
        }
    }

}
