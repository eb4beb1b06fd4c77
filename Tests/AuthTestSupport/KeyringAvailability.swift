import Foundation

/// Whether tests that need a Secret Service should run: always under `scripts/test` (which sets
/// AUTHD_REQUIRE_KEYRING=1, so a missing keyring fails them instead of skipping them), and
/// otherwise only when a session bus is there.
public enum KeyringAvailability {
    /// True when the keyring tests should run.
    public static var shouldRun: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["AUTHD_REQUIRE_KEYRING"] == "1" || environment["DBUS_SESSION_BUS_ADDRESS"] != nil
    }
}
