import AuthCore
import AuthProtocol

/// Handlers of `session.signInAnonymously` and `session.signInWithRefreshToken`.
extension DaemonMethods {
    static func registerAnonymousAndTakeOverMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.SignInAnonymously.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let credential = SignInCredential.anonymous(metadata: try encodeMetadata(parameters.data))
            switch await profile.accounts.signIn(credential, captchaToken: try captchaToken(parameters.captchaToken)) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .anonymous)
            }
        }

        table.register(Methods.SignInWithRefreshToken.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            try checkRefreshToken(parameters.refreshToken)
            switch await profile.accounts.takeOver(refreshToken: parameters.refreshToken) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .takeOver)
            }
        }
    }

    /// The longest refresh token taken. GoTrue's are a dozen characters (v1) or a few dozen (v2);
    /// the bound keeps a wrong file's content from being sent.
    static let maximumRefreshTokenBytes = 2048

    /// Refuses, before anything is sent, what cannot be a refresh token: empty, too long, with
    /// spaces or control characters, or an access token (a JWT) given by mistake. The message
    /// never quotes the input: it may be a secret all the same.
    private static func checkRefreshToken(_ token: String) throws(RPCErrorObject) {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty else { throw invalidParams("'refresh_token' must not be empty") }
        guard bytes.count <= maximumRefreshTokenBytes, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw invalidParams("'refresh_token' must be the session's refresh token (printable ASCII without spaces, at most \(maximumRefreshTokenBytes) bytes)")
        }
        if token.hasPrefix("eyJ"), token.split(separator: ".", omittingEmptySubsequences: false).count == 3 {
            throw invalidParams("'refresh_token' holds an access token (a JWT): give the session's refresh_token instead, which is the short opaque one")
        }
    }
}
