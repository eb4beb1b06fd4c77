import AuthCore
import FoundationEssentials
import FoundationGaps
import Logging

/// The claims of a profile's access token, and whether they hold without asking the server:
/// checked against the project's published signing keys (its JWKS), fetched and cached by
/// `KeySetCache`'s rules. What auth-js's `getClaims` does, for every app at once.
public actor ClaimsReader {
    /// What a token says and how far it was checked.
    public struct Report: Sendable, Equatable {
        /// The claims, as the token carries them (a JSON object).
        public var claims: Data
        /// The token's `alg`.
        public var algorithm: String
        /// The token's `kid`, when it names one.
        public var keyID: String?
        /// True when the signature holds under a published key and the token has not expired.
        public var verified: Bool
        /// How it was checked, or why it could not be.
        public var detail: String
    }

    private let api: any GoTrueAPI
    private let clock: any WallClock
    private let logger: Logger
    private var cache = KeySetCache()
    /// The fetch under way, which every request that needs the keys meanwhile waits for.
    private var fetching: Task<Result<PublishedKeySet, ServerFailure>, Never>?

    /// Creates a reader that fetches keys through `api`.
    public init(api: any GoTrueAPI, clock: any WallClock, logger: Logger) {
        self.api = api
        self.clock = clock
        self.logger = logger
    }

    /// The report for `accessToken`; nil when it is not a JWT at all.
    public func report(for accessToken: String) async -> Report? {
        guard let token = CompactJWT(accessToken) else { return nil }
        let algorithm = String(token.algorithm.prefix(16))
        func report(_ verified: Bool, _ detail: String) -> Report {
            Report(claims: token.claims, algorithm: algorithm, keyID: token.keyID.map { String($0.prefix(128)) }, verified: verified, detail: detail)
        }
        guard ["ES256", "RS256"].contains(token.algorithm) else {
            if token.algorithm.hasPrefix("HS") {
                return report(false, "signed with the project's shared JWT secret (\(algorithm)), which only the server holds: not verifiable here (a project with asymmetric signing keys has its tokens verified locally)")
            }
            return report(false, "signed with \(algorithm), which authd does not verify")
        }
        guard let kid = token.keyID else { return report(false, "the token names no signing key (kid)") }
        let claimed = TokenClaims(payload: token.claims)
        let issuedAt = claimed?.issuedAt.map { Date(timeIntervalSince1970: $0) }
        let (lookup, fetchProblem) = await key(for: kid, issuedAt: issuedAt)
        guard case .key(let key) = lookup else {
            if let fetchProblem { return report(false, "the project's signing keys could not be fetched: \(fetchProblem)") }
            return report(false, "the project does not publish the key \(kid.prefix(128)) the token names (JWKS)")
        }
        do { try TokenSignatureCheck.check(token, with: key) } catch { return report(false, error.description) }
        guard let expiry = claimed?.expiresAt, expiry.isFinite else {
            return report(false, "the signature holds, but the token has no expiry (exp)")
        }
        if expiry <= clock.now().timeIntervalSince1970 {
            return report(false, "the signature holds, but the token has expired")
        }
        return report(true, "signature checked with the project's published key \(kid.prefix(128)) (\(algorithm))")
    }

    /// What the cache has for `kid` once any fetch it needs is over: this request's own when the
    /// rules call for one, or the one another request has under way, whose answer serves this
    /// one too (applied here as well: this request may resume before the one that fetched).
    /// With why the keys could not be fetched, when they could not.
    private func key(for kid: String, issuedAt: Date?) async -> (KeySetCache.Lookup, String?) {
        let lookup = cache.lookup(kid: kid, issuedAt: issuedAt, now: clock.now())
        if case .key = lookup { return (lookup, nil) }
        let task: Task<Result<PublishedKeySet, ServerFailure>, Never>
        let ownFetch = fetching == nil
        if let fetching {
            task = fetching
        } else if lookup == .fetch {
            // Marked before the wait, so that requests meanwhile wait for this fetch.
            cache.fetchStarting(now: clock.now(), for: kid)
            let api = self.api
            task = Task { () -> Result<PublishedKeySet, ServerFailure> in
                do throws(ServerFailure) { return .success(try await api.keySet()) } catch { return .failure(error) }
            }
            fetching = task
        } else {
            return (lookup, nil)
        }
        let outcome = await task.value
        if ownFetch { fetching = nil }
        var problem: String?
        switch outcome {
        case .success(let published):
            cache.fetched(published, now: clock.now())
            if ownFetch { logger.debug("fetched the project's signing keys", metadata: ["jwks.keys": "\(published.keySet.keys.count)"]) }
        case .failure(let error):
            problem = error.readableDescription
            if ownFetch { logger.info("cannot fetch the project's signing keys", metadata: ["error": "\(error.readableDescription)"]) }
        }
        let after = cache.lookup(kid: kid, issuedAt: issuedAt, now: clock.now())
        return (after == .fetch ? .missing : after, problem)
    }
}
