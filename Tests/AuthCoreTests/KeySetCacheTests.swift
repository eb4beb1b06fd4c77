import AuthCore
import Foundation
import Testing

/// When the project's JWKS is fetched again, and which key a token gets: by the rules alone,
/// with the time passed in.
@Suite struct KeySetCacheTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    func published(_ kids: [String], cacheControl: String? = "public, max-age=600") -> PublishedKeySet {
        PublishedKeySet(keySet: JSONWebKeySet(keys: kids.map { JSONWebKey(kty: "EC", kid: $0, alg: "ES256", crv: "P-256") }), cacheControl: cacheControl)
    }

    @Test func aFreshSetAnswersUntilItsMaxAgeThenIsFetchedAgain() {
        var cache = KeySetCache()
        #expect(cache.lookup(kid: "a", issuedAt: nil, now: t0) == .fetch)
        cache.fetchStarting(now: t0)
        cache.fetched(published(["a"]), now: t0)
        guard case .key(let key) = cache.lookup(kid: "a", issuedAt: nil, now: t0.addingTimeInterval(599)) else { Issue.record("no key"); return }
        #expect(key.kid == "a")
        #expect(cache.lookup(kid: "a", issuedAt: nil, now: t0.addingTimeInterval(600)) == .fetch)
    }

    @Test func anUnknownKeyFetchesAtOnceForANewerTokenAndOtherwiseNotWithinTheGap() {
        var cache = KeySetCache()
        cache.fetched(published(["a"]), now: t0)
        // A key the set lacks, on a token older than the set: not fetched again within 30 s ...
        cache.fetchStarting(now: t0.addingTimeInterval(40))
        #expect(cache.lookup(kid: "b", issuedAt: t0, now: t0.addingTimeInterval(41)) == .missing)
        #expect(cache.lookup(kid: "made-up", issuedAt: nil, now: t0.addingTimeInterval(69)) == .missing)
        #expect(cache.lookup(kid: "made-up", issuedAt: nil, now: t0.addingTimeInterval(70)) == .fetch)
        // ... but a token issued since the last fetch may name a key published since: fetched
        // once the least gap has passed, and once only (the fetch then is newer than the token).
        #expect(cache.lookup(kid: "b", issuedAt: t0.addingTimeInterval(41), now: t0.addingTimeInterval(41.5)) == .missing)
        #expect(cache.lookup(kid: "b", issuedAt: t0.addingTimeInterval(41), now: t0.addingTimeInterval(42)) == .fetch)
        cache.fetchStarting(now: t0.addingTimeInterval(42.5), for: "b")
        #expect(cache.lookup(kid: "b", issuedAt: t0.addingTimeInterval(41), now: t0.addingTimeInterval(45)) == .missing)
    }

    @Test func aServerClockAheadCannotMakeEveryRequestFetch() {
        var cache = KeySetCache()
        cache.fetched(published(["a"]), now: t0)
        // A token claims to be issued two minutes in the future and names a key never published:
        // it is fetched for once, then once per gap, however often it is asked about.
        var fetches = 0
        for second in stride(from: 31.0, through: 130, by: 1) {
            let now = t0.addingTimeInterval(second)
            if cache.lookup(kid: "b", issuedAt: now.addingTimeInterval(120), now: now) == .fetch {
                fetches += 1
                cache.fetchStarting(now: now, for: "b")
            }
        }
        #expect(fetches == 4, "\(fetches) fetches in 100 s") // at 31 s, then every 30 s
        // An iat ahead counts as now: right after a fetch a token cannot be newer than it.
        cache.fetchStarting(now: t0.addingTimeInterval(200), for: "c")
        #expect(cache.lookup(kid: "d", issuedAt: t0.addingTimeInterval(500), now: t0.addingTimeInterval(200.5)) == .missing)
    }

    @Test func whenAFetchFailsTheKnownKeysStayInUse() {
        var cache = KeySetCache()
        cache.fetched(published(["a"]), now: t0)
        #expect(cache.lookup(kid: "a", issuedAt: nil, now: t0.addingTimeInterval(700)) == .fetch)
        cache.fetchStarting(now: t0.addingTimeInterval(700)) // and it failed: nothing else changes
        guard case .key = cache.lookup(kid: "a", issuedAt: nil, now: t0.addingTimeInterval(701)) else { Issue.record("the stale key was dropped"); return }
        // A clock set back before the fetch counts as long ago: fetch.
        #expect(cache.lookup(kid: "a", issuedAt: nil, now: t0.addingTimeInterval(-5)) == .fetch)
    }

    @Test(arguments: [
        (nil, 600.0), ("public, max-age=600", 600), ("max-age=5", 60), ("max-age=999999", 86_400), ("no-store", 60),
        ("public, no-cache, max-age=600", 60), ("max-age=\"120\"", 120), ("max-age=-3", 600), ("max-age=soon", 600), ("private", 600),
    ] as [(String?, Double)])
    func theLifetimeComesFromCacheControlWithinAMinuteAndADay(_ header: String?, _ lifetime: Double) {
        #expect(KeySetCache.lifetime(cacheControl: header) == lifetime)
    }

    @Test func aJWTIsSplitOnlyWhenEveryPartIsWhatItShouldBe() {
        let header = Data(#"{"alg":"ES256","kid":"k1","typ":"JWT"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let payload = Data(#"{"sub":"u"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let token = try? #require(CompactJWT("\(header).\(payload).c2ln"))
        #expect(token?.algorithm == "ES256" && token?.keyID == "k1" && token?.signature == Data("sig".utf8))
        #expect(token?.signingInput == Data("\(header).\(payload)".utf8))
        for bad in ["", "a.b", "\(header).\(payload)", "\(header).\(payload).c2ln.x", "\(header).bm90IGpzb24.c2ln", "\(header).\(payload).c2l+",
                    "e30.\(payload).c2ln"] {
            #expect(CompactJWT(bad) == nil, "\(bad)")
        }
    }
}
