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
        ("[profiles.a]\nurl = \"https://me:pa55word@x.supabase.co\"\nanon_key = \"k\"", "the URL carries a user name or password"),
        ("[profiles.a]\nurl = \"https://tok%FFpa55word@x.supabase.co\"\nanon_key = \"k\"", "the URL carries a user name or password"),
        ("[profiles.a]\nurl = \"https://me:pa55word@\"\nanon_key = \"k\"", "the URL given is not a URL"),
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
            #expect(!message.contains("pa55word"), "\(message)")
        }
    }

    @Test(arguments: ["http://localhost:9999", "http://127.0.0.1:9999", "http://[::1]:9999", "https://abcd.supabase.co"])
    func loopbackHTTPAndAnyHTTPSAreAccepted(_ url: String) throws {
        _ = try ConfigurationValidator.projectURL(url, source: "test")
    }
}

/// What the TOML reader brings to config.toml: the line of every value however its key was
/// written, and its refusals with the file and line.
@Suite struct ConfigurationReaderTests {
    static let refused: [(String, String)] = [
        // Dotted keys and quoted names: the message points at the value's own line.
        ("default_profile = \"work\"\nprofiles.work.url = \"http://example.com\"\nprofiles.work.anon_key = \"k\"\n",
         "config.toml:2: profiles.work.url: plain http://"),
        ("[profiles]\nwork.url = \"https://x.supabase.co\"\nwork.anon_key = \"sb_secret_x\"\n",
         "config.toml:3: profiles.work.anon_key: this is a service-role/secret key"),
        ("\n\nprofiles.a.anon_key = \"k\"\n", "config.toml:3: 'profiles.a.url' is missing"),
        ("[profiles.a]\nurl = \"https://x.supabase.co\"\nanon_key = \"k\"\nextra.x = 1\n", "config.toml:4: unknown key 'profiles.a.extra'"),
        ("[profiles.\"my profile\"]\nurl = \"ftp://x\"\nanon_key = \"k\"\n", "config.toml:2: profiles.\"my profile\".url: unsupported URL scheme 'ftp'"),
        // Unknown keys: the first one written.
        ("zeta = 1\nalpha = 2\n", "config.toml:1: unknown key 'zeta'"),
        ("\"odd key\" = 1\n", "config.toml:1: unknown key '\"odd key\"'"),
        // Values of the wrong kind, which used to pass unnoticed or read as missing.
        ("\nprofiles = 1\n", "config.toml:2: profiles must be a table"),
        ("profiles.a = 1\n", "config.toml:1: 'profiles.a' must be a table"),
        ("default_profile = 5\n", "config.toml:1: default_profile must be a profile's name in quotes"),
        ("[profiles.a]\nurl = 5\nanon_key = \"k\"\n", "config.toml:2: profiles.a.url must be a string in quotes"),
        ("[profiles.a]\nurl = \"https://x.supabase.co\"\nanon_key = true\n", "config.toml:3: profiles.a.anon_key must be a string in quotes"),
        ("[profiles.a]\nurl = \"https://x.supabase.co\"\nanon_key = \"k\"\naccess = 1\n", "config.toml:4: profiles.a.access must be \"open\" or \"ask\""),
        // The reader's own refusals, with the file's name put in front.
        ("refresh_lead = 60\n\n[profiles.a]\n[profiles.a]\n", "config.toml:4: the table [profiles.a] is defined twice (first on line 3)"),
        ("refresh_lead = [60]\n", "config.toml:1: arrays are not used in authd's configuration"),
        ("[profiles.a]\nurl = { scheme = \"https\" }\n", "config.toml:2: inline tables ({ … }) are not used in authd's configuration"),
        ("refresh_lead = 60\nrefresh_lead = 90\n", "config.toml:2: duplicate key 'refresh_lead' (first set on line 1)"),
        ("[profiles.a]\nurl = \"https://x.supabase.co\" https\n", "config.toml:2: unexpected 'h' after the value"),
    ]

    @Test(arguments: refused)
    func refusalsNameTheFileAndLine(_ text: String, _ expected: String) {
        do {
            _ = try DaemonConfiguration.parse(text, source: "config.toml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.localizedDescription.hasPrefix(expected), "\(error.localizedDescription)")
        }
    }

    @Test func profilesWrittenWithDottedKeysOrQuotedNames() throws {
        let text = """
        profiles.work.url = "https://abcd.supabase.co"
        profiles.work.anon_key = "k1"
        [profiles."my.home"]
        url = 'https://efgh.supabase.co'
        anon_key = "k2"   # the publishable key
        access = "ask"
        """
        let configuration = try DaemonConfiguration.parse(text, source: "config.toml")
        #expect(configuration.profiles.map(\.name) == ["my.home", "work"])
        #expect(configuration.profiles.first?.access == .ask)
        #expect(configuration.profiles.last?.anonKey == "k1")
        #expect(configuration.defaultProfile == "my.home", "no default_profile: the first by name")
    }

    @Test func refreshLeadTakesIntegersAndFloats() throws {
        #expect(try DaemonConfiguration.parse("refresh_lead = 90.5", source: "c").refreshLead == 90.5)
        #expect(try DaemonConfiguration.parse("refresh_lead = 1e3", source: "c").refreshLead == 1000)
        #expect(try DaemonConfiguration.parse("refresh_lead = 1_200", source: "c").refreshLead == 1200)
        #expect(try DaemonConfiguration.parse("", source: "c").refreshLead == nil)
    }

    @Test func windowsLineEndsAndAByteOrderMark() throws {
        let text = "\u{FEFF}default_profile = \"a\"\r\n[profiles.a]\r\nurl = \"https://x.supabase.co\"\r\nanon_key = \"k\" # key\r\n"
        let configuration = try DaemonConfiguration.parse(text, source: "c")
        #expect(configuration.profiles.map(\.anonKey) == ["k"])
        #expect(configuration.defaultProfile == "a")
    }
}
