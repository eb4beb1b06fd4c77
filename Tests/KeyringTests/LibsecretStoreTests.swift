import AuthCore
import AuthTestSupport
import Foundation
import Keyring
import Testing

/// The real libsecret adapter against a real gnome-keyring on a private D-Bus session.
@Suite(.enabled(if: KeyringAvailability.shouldRun, "needs a Secret Service: run under scripts/with-private-keyring"))
struct LibsecretStoreTests {
    let store = LibsecretStore()

    func uniqueProfile() -> String { "test-\(UUID().uuidString.prefix(8))" }

    func session(_ n: Int) -> Session {
        Session(accessToken: "eyJ.access-\(n)", refreshToken: "refresh-\(n)", expiresAt: Date(timeIntervalSince1970: 1_800_003_600.25),
                receivedAt: Date(timeIntervalSince1970: 1_800_000_000.5), user: UserSummary(id: "user-\(n)", email: "u\(n)@example.com"))
    }

    @Test func aStoredSessionReadsBackExactly() async throws {
        let profile = uniqueProfile()
        try await store.save(session(1), profile: profile)
        let loaded = try #require(try await store.load(profile: profile))
        #expect(loaded == session(1))
        try await store.delete(profile: profile)
    }

    @Test func nothingStoredReadsAsNil() async throws {
        #expect(try await store.load(profile: uniqueProfile()) == nil)
    }

    @Test func savingAgainReplacesAndDeleteRemoves() async throws {
        let profile = uniqueProfile()
        try await store.save(session(1), profile: profile)
        try await store.save(session(2), profile: profile)
        #expect(try await store.load(profile: profile)?.refreshToken == "refresh-2")
        try await store.delete(profile: profile)
        #expect(try await store.load(profile: profile) == nil)
        try await store.delete(profile: profile) // deleting nothing is fine
    }

    @Test func profilesAreSeparateEntries() async throws {
        let a = uniqueProfile(), b = uniqueProfile()
        try await store.save(session(1), profile: a)
        try await store.save(session(2), profile: b)
        #expect(try await store.load(profile: a)?.user.id == "user-1")
        #expect(try await store.load(profile: b)?.user.id == "user-2")
        try await store.delete(profile: a)
        #expect(try await store.load(profile: b) != nil)
        try await store.delete(profile: b)
    }

    @Test func theEntryIsFoundBySchemaAndProfileAttributeFromOutside() async throws {
        // Another Secret Service client (secret-tool) sees the same entry under the documented schema.
        let profile = uniqueProfile()
        try await store.save(session(3), profile: profile)
        let output = try await runToEnd("/usr/bin/secret-tool", ["search", "--all", "xdg:schema", "dev.authd.Session", "profile", profile])
        let text = output.stdout + output.stderr
        #expect(text.contains("label = authd session (\(profile))"))
        #expect(text.contains("attribute.profile = \(profile)"))
        try await store.delete(profile: profile)
    }
}
