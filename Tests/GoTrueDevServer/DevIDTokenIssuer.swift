import Crypto
import Foundation

/// A stand-in for Google's and Apple's OpenID providers: signs ID tokens (ES256) with a key made
/// at start, and verifies them for the `id_token` grant. Tests get tokens from
/// `POST /admin/dev/id_token`; nothing outside this process can mint one.
struct DevIDTokenIssuer: Sendable {
    /// The issuer each provider's ID tokens carry, as GoTrue checks them.
    static let issuers = ["google": "https://accounts.google.com", "apple": "https://appleid.apple.com"]

    /// The private key's raw bytes (Crypto's key type is not `Sendable`).
    private let keyBytes = P256.Signing.PrivateKey().rawRepresentation

    private var key: P256.Signing.PrivateKey {
        // The bytes came from a valid key a moment ago; they cannot fail to load.
        try! P256.Signing.PrivateKey(rawRepresentation: keyBytes)
    }

    /// Signs `claims` as an ES256 JWT.
    func sign(_ claims: [String: Any]) -> String {
        let header = JWTSigner.base64URL(Data(#"{"alg":"ES256","kid":"authd-dev-issuer","typ":"JWT"}"#.utf8))
        let payload = JWTSigner.base64URL((try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data())
        let input = header + "." + payload
        let signature = (try? key.signature(for: Data(input.utf8)).rawRepresentation) ?? Data()
        return input + "." + JWTSigner.base64URL(signature)
    }

    /// The claims of a token this issuer signed; nil when it is malformed or not ours.
    func verify(_ token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signatureBytes = JWTSigner.decodeBase64URL(String(parts[2])),
              let payload = JWTSigner.decodeBase64URL(String(parts[1])),
              let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
              key.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)) else { return nil }
        return (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]
    }
}

/// The `id_token` grant and the admin endpoint that mints tokens for it.
extension DevAuthAPI {
    /// `POST /admin/dev/id_token {"provider","email","aud"?,"nonce"?,"expires_in"?}`: an ID token
    /// as the provider would issue it. `nonce` is the claim's value, i.e. the SHA-256 hex an app
    /// gives the provider.
    func mintIDToken(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        let provider = body["provider"] as? String ?? ""
        guard let issuer = DevIDTokenIssuer.issuers[provider] else {
            return DevError.response(400, "validation_failed", "provider must be google or apple", request: request)
        }
        let email = (body["email"] as? String ?? "").lowercased()
        let issuedAt = Int(now.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": issuer, "sub": body["sub"] as? String ?? "dev-\(provider)-\(email)", "aud": body["aud"] as? String ?? options.idTokenClientIDs.first ?? "",
            "email": email, "email_verified": true, "iat": issuedAt, "exp": issuedAt + (body["expires_in"] as? Int ?? 3600),
        ]
        claims["nonce"] = body["nonce"] as? String
        return .json(200, ["id_token": idTokenIssuer.sign(claims)])
    }

    /// `POST /token?grant_type=id_token`: GoTrue's checks, in its order, with its OAuth-style errors.
    func idTokenGrant(_ body: [String: Any], request: DevRequest, now: Date) -> DevResponse {
        let provider = body["provider"] as? String ?? ""
        guard let issuer = DevIDTokenIssuer.issuers[provider] else {
            return DevError.response(400, "validation_failed", "Custom OIDC provider \"\(provider.prefix(64))\" not allowed", request: request)
        }
        guard let token = body["id_token"] as? String, let claims = idTokenIssuer.verify(token),
              claims["iss"] as? String == issuer,
              let exp = (claims["exp"] as? NSNumber)?.doubleValue, exp > now.timeIntervalSince1970 else {
            return Self.oauthError("invalid request", "Bad ID token")
        }
        let audience = claims["aud"] as? String ?? ""
        guard options.idTokenClientIDs.contains(audience) else {
            return Self.oauthError("invalid request", "Unacceptable audience in id_token: [\(audience)]")
        }
        let tokenNonce = claims["nonce"] as? String ?? ""
        let givenNonce = body["nonce"] as? String ?? ""
        if tokenNonce.isEmpty != givenNonce.isEmpty {
            return Self.oauthError("invalid request", "Passed nonce and nonce in id_token should either both exist or not.")
        }
        if !givenNonce.isEmpty, SHA256.hash(data: Data(givenNonce.utf8)).map({ String(format: "%02x", $0) }).joined() != tokenNonce {
            return Self.oauthError("invalid nonce", "Nonces mismatch")
        }
        let email = claims["email"] as? String ?? ""
        return state.withLock { store in
            .json(200, issueSession(for: linkedUser(email: email, provider: provider, subject: claims["sub"] as? String, store: &store, now: now),
                                    method: "oauth", store: &store, now: now))
        }
    }

    /// GoTrue's account linking for an OAuth sign-in (`DetermineAccountLinking`): the user who
    /// already has the identity `provider`/`subject`; else the user with the (verified) `email`,
    /// who gets that identity; else a new confirmed user with it. `subject` defaults to the one
    /// the simulated provider gives `email` (`providerSubject`), the `sub` of a minted ID token.
    func linkedUser(email: String, provider: String, subject: String? = nil, store: inout DevStore, now: Date) -> DevUser {
        let email = email.lowercased()
        let subject = subject ?? Self.providerSubject(provider, email: email)
        if var owner = store.identityOwner(provider: provider, subject: subject) {
            owner.recordSignIn(provider: provider, subject: subject, now: now)
            store.users[owner.id] = owner
            return owner
        }
        var user = store.user(email: email) ?? DevUser(id: UUID().uuidString.lowercased(), email: email, passwordDigest: "",
                                                        userMetadataJSON: Data("{}".utf8), createdAt: now, updatedAt: now,
                                                        lastSignInAt: nil, providers: [])
        user.addIdentity(oauthIdentity(provider: provider, subject: subject, email: email, userID: user.id, now: now))
        user.emailConfirmedAt = user.emailConfirmedAt ?? now
        user.lastSignInAt = now
        store.users[user.id] = user
        return user
    }

    /// GoTrue's older OAuth-style error body, which the `id_token` grant uses (always HTTP 400).
    static func oauthError(_ error: String, _ description: String) -> DevResponse {
        .json(400, ["error": error, "error_description": description])
    }
}
