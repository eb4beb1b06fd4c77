import AuthConfig
import Testing

/// `authctl profile` edits: comments survive, every result parses, mistakes are refused.
@Suite struct ProfileFileEditorTests {
    let original = """
    # my projects
    refresh_lead = 120

    # the day job
    [profiles.work]
    url = "https://abcd.supabase.co"
    anon_key = "sb_publishable_work"

    # side project
    [profiles.home]
    url = "https://efgh.supabase.co"
    anon_key = "sb_publishable_home"
    """

    @Test func addingAppendsATableAndKeepsComments() throws {
        let edited = try ProfileFileEditor.adding(name: "local", url: "http://127.0.0.1:54321", anonKey: "sb_publishable_local", to: original)
        #expect(edited.hasPrefix(original))
        let parsed = try DaemonConfiguration.parse(edited, source: "t")
        #expect(parsed.profiles.map(\.name).sorted() == ["home", "local", "work"])
        #expect(parsed.defaultProfile == "home", "no default_profile: the first by name")
    }

    @Test func addingToAnEmptyFileAndAsDefault() throws {
        let first = try ProfileFileEditor.adding(name: "work", url: "https://abcd.supabase.co", anonKey: "k", to: "")
        #expect(first == "[profiles.work]\nurl = \"https://abcd.supabase.co\"\nanon_key = \"k\"\n")
        let second = try ProfileFileEditor.adding(name: "home", url: "https://efgh.supabase.co", anonKey: "k2", to: first, makeDefault: true)
        #expect(try DaemonConfiguration.parse(second, source: "t").defaultProfile == "home")
    }

    @Test func refusedAdditions() {
        #expect(throws: ConfigurationError.self) { try ProfileFileEditor.adding(name: "work", url: "https://x.supabase.co", anonKey: "k", to: original) }
        #expect(throws: ConfigurationError.self) { try ProfileFileEditor.adding(name: "bad name", url: "https://x.supabase.co", anonKey: "k", to: original) }
        #expect(throws: ConfigurationError.self) { try ProfileFileEditor.adding(name: "x", url: "http://example.com", anonKey: "k", to: original) }
        #expect(throws: ConfigurationError.self) { try ProfileFileEditor.adding(name: "x", url: "https://x.supabase.co", anonKey: "sb_secret_abc", to: original) }
    }

    @Test func removingDropsTheTableButNotTheNextTablesComment() throws {
        let edited = try ProfileFileEditor.removing(name: "work", from: original)
        #expect(!edited.contains("abcd.supabase.co"))
        #expect(edited.contains("# side project\n[profiles.home]"))
        #expect(edited.contains("# my projects"))
        #expect(try DaemonConfiguration.parse(edited, source: "t").profiles.map(\.name) == ["home"])
        #expect(throws: ConfigurationError.self) { try ProfileFileEditor.removing(name: "nope", from: original) }
    }

    @Test func theDefaultIsSetReplacedAndDroppedWithItsProfile() throws {
        let withDefault = try ProfileFileEditor.settingDefault(name: "home", in: original)
        #expect(try DaemonConfiguration.parse(withDefault, source: "t").defaultProfile == "home")
        let replaced = try ProfileFileEditor.settingDefault(name: "work", in: withDefault)
        #expect(replaced.components(separatedBy: "default_profile").count == 2, "one default_profile line")
        #expect(try DaemonConfiguration.parse(replaced, source: "t").defaultProfile == "work")
        let removed = try ProfileFileEditor.removing(name: "work", from: replaced)
        #expect(!removed.contains("default_profile"))
        #expect(try DaemonConfiguration.parse(removed, source: "t").defaultProfile == "home")
        #expect(throws: ConfigurationError.self) { try ProfileFileEditor.settingDefault(name: "nope", in: original) }
    }
}

/// Every configuration error names the file and the line it is about.
@Suite struct ConfigurationLineTests {
    let header = "# comment\ndefault_profile = \"a\"\n\n[profiles.a]\n"

    @Test(arguments: [
        ("url = \"http://example.com\"\nanon_key = \"k\"\n", "config.toml:5: profiles.a.url"),
        ("url = \"https://x.supabase.co\"\nanon_key = \"sb_secret_abc\"\n", "config.toml:6: profiles.a.anon_key"),
        ("url = \"https://x.supabase.co\"\nanon_key = \"k\"\ncolour = \"blue\"\n", "config.toml:7: unknown key 'profiles.a.colour'"),
        ("anon_key = \"k\"\n", "config.toml:4: 'profiles.a.url' is missing"),
    ])
    func profileErrorsPointAtTheirLine(_ body: String, _ expected: String) {
        #expect {
            _ = try DaemonConfiguration.parse(header + body, source: "config.toml")
        } throws: { error in
            (error as? ConfigurationError)?.localizedDescription.hasPrefix(expected) == true
        }
    }

    @Test func topLevelErrorsPointAtTheirLine() {
        #expect {
            _ = try DaemonConfiguration.parse("\nrefresh_lead = -3\n", source: "c.toml")
        } throws: { ($0 as? ConfigurationError)?.localizedDescription.hasPrefix("c.toml:2: refresh_lead") == true }
        #expect {
            _ = try DaemonConfiguration.parse("default_profile = \"b\"\n[profiles.a]\nurl = \"https://x.supabase.co\"\nanon_key = \"k\"\n", source: "c.toml")
        } throws: { ($0 as? ConfigurationError)?.localizedDescription.hasPrefix("c.toml:1: default_profile") == true }
    }
}

/// Edits find tables and keys by the lines the TOML reader gives them, not by scanning the text.
@Suite struct ProfileFileEditorLayoutTests {
    @Test func aQuotedNameWithADotIsRemoved() throws {
        let text = "[profiles.work]\nurl = \"https://a.supabase.co\"\nanon_key = \"k\"\n\n[ profiles . \"my.profile\" ] # old\nurl = \"https://b.supabase.co\"\nanon_key = \"k2\"\n"
        let edited = try ProfileFileEditor.removing(name: "my.profile", from: text)
        #expect(edited == "[profiles.work]\nurl = \"https://a.supabase.co\"\nanon_key = \"k\"\n")
    }

    @Test func aLineInAMultiLineStringIsNotAHeader() throws {
        let text = "[profiles.work]\nurl = \"https://a.supabase.co\"\nanon_key = \"\"\"\n[not a header]\n\"\"\"\n[profiles.home]\nurl = \"https://b.supabase.co\"\nanon_key = \"k\""
        #expect(try ProfileFileEditor.removing(name: "work", from: text) == "[profiles.home]\nurl = \"https://b.supabase.co\"\nanon_key = \"k\"")
        #expect(try ProfileFileEditor.removing(name: "home", from: text) == "[profiles.work]\nurl = \"https://a.supabase.co\"\nanon_key = \"\"\"\n[not a header]\n\"\"\"")
    }

    @Test func aProfileWrittenWithDottedKeysIsLeftToTheUser() {
        let text = "profiles.work.url = \"https://a.supabase.co\"\nprofiles.work.anon_key = \"k\"\n"
        #expect {
            _ = try ProfileFileEditor.removing(name: "work", from: text)
        } throws: { ($0 as? ConfigurationError)?.localizedDescription.contains("is not written as a [profiles.work] table") == true }
    }

    @Test func aQuotedDefaultProfileKeyIsReplacedAndRemoved() throws {
        let text = "\"default_profile\" = \"work\" # mine\n[profiles.work]\nurl = \"https://a.supabase.co\"\nanon_key = \"k\"\n[profiles.home]\nurl = \"https://b.supabase.co\"\nanon_key = \"k2\"\n"
        let switched = try ProfileFileEditor.settingDefault(name: "home", in: text)
        #expect(switched.hasPrefix("default_profile = \"home\"\n[profiles.work]"))
        let removed = try ProfileFileEditor.removing(name: "work", from: text)
        #expect(removed == "[profiles.home]\nurl = \"https://b.supabase.co\"\nanon_key = \"k2\"\n")
    }

    @Test func windowsLineEndsSurviveEdits() throws {
        let text = "default_profile = \"work\"\r\n[profiles.work]\r\nurl = \"https://a.supabase.co\"\r\nanon_key = \"k\"\r\n[profiles.home]\r\nurl = \"https://b.supabase.co\"\r\nanon_key = \"k2\"\r\n"
        let switched = try ProfileFileEditor.settingDefault(name: "home", in: text)
        #expect(switched == text.replacing("default_profile = \"work\"", with: "default_profile = \"home\""))
        let removed = try ProfileFileEditor.removing(name: "work", from: text)
        #expect(removed == "[profiles.home]\r\nurl = \"https://b.supabase.co\"\r\nanon_key = \"k2\"\r\n")
    }

    @Test func aByteOrderMarkStaysFirst() throws {
        let text = "\u{FEFF}[profiles.work]\nurl = \"https://a.supabase.co\"\nanon_key = \"k\"\n"
        let edited = try ProfileFileEditor.settingDefault(name: "work", in: text)
        #expect(edited == "\u{FEFF}default_profile = \"work\"\n[profiles.work]\nurl = \"https://a.supabase.co\"\nanon_key = \"k\"\n")
    }
}
