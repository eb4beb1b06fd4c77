import AuthConfig
import Foundation
import Testing

/// config.toml parsing and the rules every URL and key must pass.
@Suite struct ConfigurationTests {
    @Test func aValidFileWithTwoProfiles() throws {
        let text = """
        default_profile = "work"
        refresh_lead = 120
        [profiles.work]
        url = "https://abcd.supabase.co"
        anon_key = "sb_publishable_abc"
        [profiles.local]
        url = "http://127.0.0.1:54321"
        anon_key = "anon"
        """
        let configuration = try DaemonConfiguration.parse(text, source: "config.toml")
        #expect(configuration.defaultProfile == "work")
        #expect(configuration.refreshLead == 120)
        #expect(configuration.profiles.map(\.name) == ["local", "work"])
        #expect(configuration.profiles.last?.url.absoluteString == "https://abcd.supabase.co")
        #expect(configuration.signInNotices, "the 'sign in again' notice is on unless turned off")
    }

    @Test func signInNotificationsCanBeTurnedOff() throws {
        #expect(try !DaemonConfiguration.parse("sign_in_notifications = false", source: "config.toml").signInNotices)
        #expect(try DaemonConfiguration.parse("sign_in_notifications = true", source: "config.toml").signInNotices)
    }

    static let bad: [(String, String)] = [
        ("[profiles.a]\nurl = \"https://x.supabase.co\"\nanon_key = \"k\"\ncolour = \"blue\"", "unknown key 'profiles.a.colour'"),
        ("refresh = 5", "unknown key 'refresh'"),
        ("sign_in_notifications = \"no\"", "sign_in_notifications must be true or false"),
        ("sign_in_notifications = 0", "sign_in_notifications must be true or false"),
        ("refresh_lead = -3", "refresh_lead must be a number of seconds from 1 to 86400"),
        ("refresh_lead = \"soon\"", "refresh_lead must be a number of seconds from 1 to 86400"),
        ("refresh_lead = inf", "refresh_lead must be a number of seconds from 1 to 86400"),
        ("refresh_lead = nan", "refresh_lead must be a number of seconds from 1 to 86400"),
        ("refresh_lead = 86401", "refresh_lead must be a number of seconds from 1 to 86400"),
        ("[profiles.a]\nurl = \"http://x.supabase.co\"\nanon_key = \"k\"", "plain http:// is only allowed for a loopback server"),
        ("[profiles.a]\nurl = \"not a url\"\nanon_key = \"k\"", "is not a URL"),
        ("[profiles.a]\nurl = \"https://x.supabase.co\"\nanon_key = \"sb_secret_abc\"", "service-role/secret key"),
        // {"role":"service_role"} as a JWT payload.
        ("[profiles.a]\nurl = \"https://x.supabase.co\"\nanon_key = \"eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.sig\"", "service-role/secret key"),
        ("[profiles.a]\nanon_key = \"k\"", "'profiles.a.url' is missing"),
        ("default_profile = \"b\"\n[profiles.a]\nurl = \"https://x.supabase.co\"\nanon_key = \"k\"", "default_profile 'b' is not one of the profiles"),
        ("[profiles.a\nurl = 1", "config.toml:1:"),
    ]

    @Test(arguments: bad)
    func badFilesAreRefusedWithTheFileInTheMessage(_ text: String, _ expected: String) {
        do {
            _ = try DaemonConfiguration.parse(text, source: "config.toml")
            Issue.record("accepted: \(text)")
        } catch {
            let message = error.localizedDescription
            #expect(message.hasPrefix("config.toml"), "\(message)")
            #expect(message.contains(expected), "\(message)")
        }
    }

    @Test(arguments: ["http://localhost:9999", "http://127.0.0.1:9999", "http://[::1]:9999", "https://abcd.supabase.co"])
    func loopbackHTTPAndAnyHTTPSAreAccepted(_ url: String) throws {
        _ = try ConfigurationValidator.projectURL(url, source: "test")
    }
}
