@testable import AuthConfig
import Glibc
import Testing

/// What DaemonConfiguration used Foundation's wider API for: the JWT role check and the home folder.
@Suite struct ConfigurationPlatformTests {
    @Test(arguments: [
        // {"role":"service_role","n":">>>???"}: base64url with '-' and '_', padding left off.
        ("h.eyJyb2xlIjoic2VydmljZV9yb2xlIiwibiI6Ij4-Pj8_PyJ9.s", "service_role"),
        ("h.eyJyb2xlIjoiYW5vbiJ9.s", "anon"),
        // {"role":5}: a role that is not a string is no role.
        ("h.eyJyb2xlIjo1fQ.s", nil),
        // [1,2]: not an object.
        ("h.WzEsMl0.s", nil),
        ("h.!!!.s", nil),
        ("sb_publishable_abc", nil),
    ] as [(String, String?)])
    func jwtRoleReadsThePayloadsRoleClaim(_ key: String, _ role: String?) {
        #expect(ConfigurationValidator.jwtRole(key) == role)
    }

    @Test func theDefaultPathFollowsXDGThenHOMEThenThePasswordDatabase() throws {
        #expect(DaemonConfiguration.defaultPath(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/h"]) == "/x/authd/config.toml")
        #expect(DaemonConfiguration.defaultPath(environment: ["XDG_CONFIG_HOME": "", "HOME": "/h"]) == "/h/.config/authd/config.toml")
        let entry = try #require(getpwuid(getuid()))
        let home = String(cString: try #require(entry.pointee.pw_dir))
        #expect(DaemonConfiguration.defaultPath(environment: [:]) == home + "/.config/authd/config.toml")
        #expect(DaemonConfiguration.defaultPath(environment: ["HOME": ""]) == home + "/.config/authd/config.toml")
    }
}
