import AuthCore
import FoundationEssentials

/// Identities linked to the user, and enterprise single sign-on: both answer a URL a browser
/// opens.
extension GoTrueClient {
    /// `GET /user/identities/authorize?…&skip_http_redirect=true`: GoTrue answers the provider URL as JSON.
    public func identityLinkURL(accessToken: String, provider: String, redirectTo: String, codeChallenge: String,
                                scopes: String?) async throws(ServerFailure) -> URL {
        var items = [URLQueryItem(name: "provider", value: provider), URLQueryItem(name: "redirect_to", value: redirectTo),
                     URLQueryItem(name: "code_challenge", value: codeChallenge), URLQueryItem(name: "code_challenge_method", value: "s256"),
                     URLQueryItem(name: "skip_http_redirect", value: "true")]
        if let scopes { items.append(URLQueryItem(name: "scopes", value: scopes)) }
        return try Answer.Redirect.url(try await send("GET", "user/identities/authorize", query: Self.query(items), bearer: accessToken))
    }

    /// `DELETE /user/identities/{id}`.
    public func unlinkIdentity(accessToken: String, identityID: String) async throws(ServerFailure) {
        guard let id = FactorID.canonical(identityID) else {
            throw .notSent(url: authURL.absoluteString, detail: "an identity id is a UUID")
        }
        _ = try await send("DELETE", "user/identities/\(id)", bearer: accessToken)
    }

    /// `POST /sso` with `skip_http_redirect`: GoTrue answers the identity provider's URL as JSON.
    public func singleSignOnURL(_ target: SingleSignOnTarget, redirectTo: String, codeChallenge: String) async throws(ServerFailure) -> URL {
        var body = RequestBody.SingleSignOn(redirectTo: redirectTo, codeChallenge: codeChallenge)
        switch target {
        case .domain(let domain): body.domain = domain
        case .provider(let id): body.providerID = id
        }
        return try Answer.Redirect.url(try await send("POST", "sso", body: body))
    }
}
