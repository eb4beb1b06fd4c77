import AuthCore
@testable import AuthDaemon
import AuthTestSupport
import Crypto
import _CryptoExtras
import Foundation
import Logging
import Testing

/// Claims checked against the project's published keys, as the daemon does it: the signature
/// math, the choice of key, and how often the key set is fetched.
@Suite struct ClaimsReaderTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func base64URL(_ data: some DataProtocol) -> String {
        Data(data).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A token signed by `sign` with `alg` and `kid`, expiring at `exp`.
    static func token(alg: String, kid: String?, exp: TimeInterval, _ sign: (Data) throws -> Data) rethrows -> String {
        let header = kid.map { #"{"alg":"\#(alg)","kid":"\#($0)","typ":"JWT"}"# } ?? #"{"alg":"\#(alg)","typ":"JWT"}"#
        let input = base64URL(Data(header.utf8)) + "." + base64URL(Data(#"{"exp":\#(Int(exp)),"role":"authenticated","sub":"u-1"}"#.utf8))
        return input + "." + base64URL(try sign(Data(input.utf8)))
    }

    static func jwk(_ key: P256.Signing.PrivateKey, kid: String) -> JSONWebKey {
        let raw = key.publicKey.rawRepresentation
        return JSONWebKey(kty: "EC", kid: kid, alg: "ES256", crv: "P-256", x: base64URL(raw.prefix(32)), y: base64URL(raw.suffix(32)))
    }

    func reader(_ api: FakeGoTrue, _ clock: ManualWallClock) -> ClaimsReader {
        ClaimsReader(api: api, clock: clock, logger: Logger(label: "test"))
    }

    @Test func anES256TokenIsVerifiedWithItsPublishedKeyAndAForgeryIsNot() async throws {
        let key = P256.Signing.PrivateKey(), other = P256.Signing.PrivateKey()
        let api = FakeGoTrue()
        api.publish([Self.jwk(key, kid: "k1")], cacheControl: "max-age=600")
        let clock = ManualWallClock(t0)
        let claims = reader(api, clock)
        let good = try Self.token(alg: "ES256", kid: "k1", exp: t0.timeIntervalSince1970 + 3600) { try key.signature(for: $0).rawRepresentation }
        let report = try #require(await claims.report(for: good))
        #expect(report.verified && report.algorithm == "ES256" && report.keyID == "k1", "\(report.detail)")
        #expect(String(decoding: report.claims, as: UTF8.self).contains(#""sub":"u-1""#))

        let forged = try Self.token(alg: "ES256", kid: "k1", exp: t0.timeIntervalSince1970 + 3600) { try other.signature(for: $0).rawRepresentation }
        let refused = try #require(await claims.report(for: forged))
        #expect(!refused.verified && refused.detail == "the signature does not match the published key")
        // Claiming RS256 under an EC key does not change what checks it.
        let switched = try Self.token(alg: "RS256", kid: "k1", exp: t0.timeIntervalSince1970 + 3600) { try key.signature(for: $0).rawRepresentation }
        #expect(await claims.report(for: switched)?.verified == false)
        let expired = try Self.token(alg: "ES256", kid: "k1", exp: t0.timeIntervalSince1970 - 1) { try key.signature(for: $0).rawRepresentation }
        #expect(await claims.report(for: expired)?.detail == "the signature holds, but the token has expired")
        #expect(api.keySetFetches == 1, "one fetch served every check within max-age")
        #expect(await claims.report(for: "not a jwt") == nil)
    }

    @Test func anRS256TokenIsVerifiedWithItsModulusAndExponent() async throws {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let primitives = try key.publicKey.getKeyPrimitives()
        let api = FakeGoTrue()
        api.publish([
            JSONWebKey(kty: "RSA", kid: "r1", alg: "RS256", n: Self.base64URL(primitives.modulus), e: Self.base64URL(primitives.publicExponent)),
        ])
        let claims = reader(api, ManualWallClock(t0))
        let good = try Self.token(alg: "RS256", kid: "r1", exp: t0.timeIntervalSince1970 + 60) {
            try key.signature(for: SHA256.hash(data: $0), padding: .insecurePKCS1v1_5).rawRepresentation
        }
        #expect(await claims.report(for: good)?.verified == true)
        let pss = try Self.token(alg: "RS256", kid: "r1", exp: t0.timeIntervalSince1970 + 60) {
            try key.signature(for: SHA256.hash(data: $0), padding: .PSS).rawRepresentation
        }
        #expect(await claims.report(for: pss)?.verified == false, "RS256 is PKCS #1 v1.5, not PSS")

        // A published key too small to trust is refused, however well it signs.
        let weak = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        let weakPrimitives = try weak.publicKey.getKeyPrimitives()
        api.publish([
            JSONWebKey(kty: "RSA", kid: "weak", alg: "RS256", n: Self.base64URL(weakPrimitives.modulus), e: Self.base64URL(weakPrimitives.publicExponent)),
        ])
        let weakToken = try Self.token(alg: "RS256", kid: "weak", exp: t0.timeIntervalSince1970 + 60) {
            try weak.signature(for: SHA256.hash(data: $0), padding: .insecurePKCS1v1_5).rawRepresentation
        }
        let refused = try #require(await reader(api, ManualWallClock(t0)).report(for: weakToken))
        #expect(!refused.verified && refused.detail.contains("1024 bits is too weak"), "\(refused.detail)")
    }

    @Test func aTokenWithoutAnExpiryIsNotVerified() async throws {
        let key = P256.Signing.PrivateKey()
        let api = FakeGoTrue()
        api.publish([Self.jwk(key, kid: "k1")])
        let input = Self.base64URL(Data(#"{"alg":"ES256","kid":"k1"}"#.utf8)) + "." + Self.base64URL(Data(#"{"sub":"u-1"}"#.utf8))
        let token = input + "." + Self.base64URL(try key.signature(for: Data(input.utf8)).rawRepresentation)
        #expect(await reader(api, ManualWallClock(t0)).report(for: token)?.detail == "the signature holds, but the token has no expiry (exp)")
    }

    @Test func requestsWhileTheKeysAreFetchedWaitForThatOneFetch() async throws {
        let key = P256.Signing.PrivateKey()
        let api = FakeGoTrue()
        api.publish([Self.jwk(key, kid: "k1")])
        api.setKeySetDelay(.milliseconds(300))
        let claims = reader(api, ManualWallClock(t0))
        let token = try Self.token(alg: "ES256", kid: "k1", exp: t0.timeIntervalSince1970 + 60) { try key.signature(for: $0).rawRepresentation }
        let verified = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 { group.addTask { await claims.report(for: token)?.verified == true } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(verified == 20)
        #expect(api.keySetFetches == 1)
    }

    @Test func hs256IsShownUnverifiedAndFetchesNothing() async throws {
        let api = FakeGoTrue()
        let claims = reader(api, ManualWallClock(t0))
        let hs = Self.token(alg: "HS256", kid: "authd-dev", exp: t0.timeIntervalSince1970 + 60) { Data(HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(size: .bits256))) }
        let report = try #require(await claims.report(for: hs))
        #expect(!report.verified && report.detail.contains("only the server holds"))
        #expect(api.keySetFetches == 0)
    }

    @Test func aRotatedKeyIsFetchedOnceAndAMadeUpOneCannotMakeAuthdHammerTheServer() async throws {
        let first = P256.Signing.PrivateKey(), second = P256.Signing.PrivateKey()
        let api = FakeGoTrue()
        api.publish([Self.jwk(first, kid: "k1")], cacheControl: "max-age=600")
        let clock = ManualWallClock(t0)
        let claims = reader(api, clock)
        let old = try Self.token(alg: "ES256", kid: "k1", exp: t0.timeIntervalSince1970 + 3600) { try first.signature(for: $0).rawRepresentation }
        #expect(await claims.report(for: old)?.verified == true)
        // The project rotates: the new key is published beside the old one.
        api.publish([Self.jwk(first, kid: "k1"), Self.jwk(second, kid: "k2")])
        clock.advance(by: 60)
        let new = try Self.token(alg: "ES256", kid: "k2", exp: t0.timeIntervalSince1970 + 3600) { try second.signature(for: $0).rawRepresentation }
        #expect(await claims.report(for: new)?.verified == true)
        #expect(api.keySetFetches == 2)
        let madeUp = try Self.token(alg: "ES256", kid: "nobody", exp: t0.timeIntervalSince1970 + 3600) { try second.signature(for: $0).rawRepresentation }
        for _ in 0..<5 { #expect(await claims.report(for: madeUp)?.detail == "the project does not publish the key nobody the token names (JWKS)") }
        #expect(api.keySetFetches == 2, "an unknown key within 30 s of a fetch fetches nothing")

        // Offline: the keys known stay in use, and a key that cannot be fetched says why.
        api.setKeySet(.failure(.unreachable(url: "https://x.supabase.co/auth/v1", detail: "timed out")))
        clock.advance(by: 700)
        #expect(await claims.report(for: old)?.verified == true)
        clock.advance(by: 31)
        #expect(await claims.report(for: madeUp)?.detail.hasPrefix("the project's signing keys could not be fetched: cannot reach") == true)
    }
}
