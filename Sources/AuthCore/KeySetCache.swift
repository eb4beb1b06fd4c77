import FoundationEssentials
import FoundationGaps

/// When to fetch the project's JWKS again, and which key verifies a token. Pure: the caller
/// fetches, and passes the time in.
///
/// A fetched set is used for as long as its `Cache-Control: max-age` says (GoTrue sends 600 s),
/// kept between a minute and a day. A token naming a key the set lacks makes it fetched again
/// at once when the token was issued after the last fetch (the project may have rotated its
/// keys since); otherwise the set is newer than the token and is fetched again only after
/// `refetchGap`, so that no token can make authd hammer the server. When a fetch fails the keys
/// already known are still used: published keys stay valid after a rotation, and being offline
/// must not make every token unverifiable.
public struct KeySetCache: Sendable, Equatable {
    /// The lifetime of a set whose answer had no usable `max-age`: GoTrue's own 600 s.
    public static let defaultLifetime: TimeInterval = 600
    /// The range a `max-age` is kept within.
    public static let lifetimes: ClosedRange<TimeInterval> = 60...86_400
    /// The least time between two fetches made for a key the set lacks.
    public static let refetchGap: TimeInterval = 30
    /// The least time between two fetches even for a token issued since the last one: a server
    /// whose clock runs ahead must not make every request fetch.
    public static let minimumGap: TimeInterval = 2

    /// What `lookup` found.
    public enum Lookup: Sendable, Equatable {
        /// The key to verify with.
        case key(JSONWebKey)
        /// Fetch the set first, then look again.
        case fetch
        /// The key is not published (or the set cannot be had): the token cannot be verified.
        case missing
    }

    private var keySet = JSONWebKeySet(keys: [])
    private var fetchedAt: Date?
    private var lifetime = KeySetCache.defaultLifetime
    private var lastAttempt: Date?
    /// The key the last fetch was made for: a token naming it again waits for `refetchGap`.
    private var fetchedFor: String?

    /// An empty cache.
    public init() {}

    /// The key for `kid` at `now`, or what to do first. `issuedAt` is the token's `iat`, when
    /// it has one.
    public func lookup(kid: String, issuedAt: Date?, now: Date) -> Lookup {
        let known = keySet.key(id: kid)
        if let known, let fetchedAt, now >= fetchedAt, now < fetchedAt.addingTimeInterval(lifetime) { return .key(known) }
        guard let lastAttempt, now >= lastAttempt else { return .fetch } // a clock set back counts as long ago
        let since = now.timeIntervalSince(lastAttempt)
        // A token issued since the last fetch may name a key published since (`iat` is whole
        // seconds, hence the second of slack; an `iat` ahead of our clock counts as now). A fetch
        // follows it once per key, and never sooner than `minimumGap` after the last.
        if known == nil, kid != fetchedFor, let issuedAt, min(issuedAt, now) > lastAttempt.addingTimeInterval(-1), since >= Self.minimumGap {
            return .fetch
        }
        if since < Self.refetchGap { return known.map(Lookup.key) ?? .missing }
        return .fetch
    }

    /// The server answered `published` at `now`.
    public mutating func fetched(_ published: PublishedKeySet, now: Date) {
        keySet = published.keySet
        fetchedAt = now
        lastAttempt = now
        lifetime = Self.lifetime(cacheControl: published.cacheControl)
    }

    /// A fetch starts at `now`, for a token naming `kid`: until it ends, and for `refetchGap`
    /// after, lookups use the keys known so far rather than fetch again. A fetch that fails
    /// leaves those keys in use.
    public mutating func fetchStarting(now: Date, for kid: String? = nil) {
        lastAttempt = now
        fetchedFor = kid
    }

    /// The `max-age` of a `Cache-Control` header, kept within `lifetimes`; `defaultLifetime`
    /// without one, and the least lifetime for `no-cache` or `no-store`.
    public static func lifetime(cacheControl: String?) -> TimeInterval {
        guard let cacheControl else { return defaultLifetime }
        var maxAge: TimeInterval?
        for directive in cacheControl.lowercased().split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
            if parts.first == "no-cache" || parts.first == "no-store" { return lifetimes.lowerBound }
            if parts.first == "max-age", parts.count == 2, let seconds = Int(parts[1].trimming { $0 == "\"" }), seconds >= 0 {
                maxAge = TimeInterval(seconds)
            }
        }
        return min(max(maxAge ?? defaultLifetime, lifetimes.lowerBound), lifetimes.upperBound)
    }
}
