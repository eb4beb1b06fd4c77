@testable import AuthConfig
import Testing

/// The TOML reader behind config.toml: what TOML 1.0 allows is read as the spec says, what authd's
/// configuration does not use is refused by name, and every refusal names its line.
@Suite struct TOMLReaderTests {
    /// A table as one line of text, so that a whole expected tree fits in a test argument: each
    /// value with its kind, its value and `@line`; a table `{…}@line`, with `h` when a header
    /// defines it.
    static func describe(_ value: TOMLValue) -> String {
        switch value.content {
        case .string(let text): "s\(text.debugDescription)@\(value.line)"
        case .integer(let number): "i\(number)@\(value.line)"
        case .float(let number): "f\(number)@\(value.line)"
        case .boolean(let flag): "b\(flag)@\(value.line)"
        case .table(let table): describe(table)
        }
    }

    static func describe(_ table: TOMLTable) -> String {
        "{" + table.entries.map { "\($0.key)=\(describe($0.value))" }.joined(separator: ",") + "}@\(table.line)"
            + (table.definedByHeader ? "h" : "")
    }

    static let accepted: [(String, String)] = [
        ("", "{}@1"),
        ("\u{FEFF}", "{}@1"),
        ("\u{FEFF}a = 1", "{a=i1@1}@1"),
        ("# only a comment", "{}@1"),
        ("\n\n  \t\n", "{}@1"),
        ("key = \"value\" # comment", "{key=s\"value\"@1}@1"),
        ("key=\"value\"#comment", "{key=s\"value\"@1}@1"),
        ("\tkey\t=\t'v'\t", "{key=s\"v\"@1}@1"),
        ("1234 = 1", "{1234=i1@1}@1"),
        ("\"a.b\" = 1", "{a.b=i1@1}@1"),
        ("'c:\\x' = 1", "{c:\\x=i1@1}@1"),
        ("\"\" = 1", "{=i1@1}@1"),
        ("bare-key_1 = true\nb = false", "{bare-key_1=btrue@1,b=bfalse@2}@1"),
        // TOML 1.0: a float-looking key is two dotted bare keys.
        ("3.14159 = \"pi\"", "{3={14159=s\"pi\"@1}@1}@1"),
        ("a.b.c = 1\na.b.d = 2\na.e = 3", "{a={b={c=i1@1,d=i2@2}@1,e=i3@3}@1}@1"),
        ("a . \"b c\" . 'd' = 1", "{a={b c={d=i1@1}@1}@1}@1"),
        ("profiles.work.url = \"https://x\"", "{profiles={work={url=s\"https://x\"@1}@1}@1}@1"),
        ("[profiles.work]\nurl = \"u\"", "{profiles={work={url=s\"u\"@2}@1h}@1}@1"),
        ("[ profiles . \"my profile\" ]\nurl = 1", "{profiles={my profile={url=i1@2}@1h}@1}@1"),
        ("[\"a.b\"]\nx = 1", "{a.b={x=i1@2}@1h}@1"),
        // A table named by a later header's path may still be defined by a header of its own.
        ("[a.b]\nx=1\n[a]\ny=2", "{a={b={x=i1@2}@1h,y=i2@4}@3h}@1"),
        // Sub-tables of a table made by dotted keys (the spec's own example).
        ("[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true",
         "{fruit={apple={color=s\"red\"@2,taste={sweet=btrue@3}@3,texture={smooth=btrue@5}@4h}@2}@1h}@1"),
        ("a.b = 1\n[a.c]\nd = 2", "{a={b=i1@1,c={d=i2@3}@2h}@1}@1"),
        ("[a]#c\n[b] # c\n", "{a={}@1h,b={}@2h}@1"),
        ("[a]\n\n\nb = 1\n", "{a={b=i1@4}@1h}@1"),
        ("a = 1 # a comment with \"quotes\", [brackets] and é\n", "{a=i1@1}@1"),
        // Line ends: LF or CRLF, also inside multi-line strings, which read them as LF.
        ("a = 1\r\nb = 2\r\n", "{a=i1@1,b=i2@2}@1"),
        ("\u{FEFF}[a]\r\nb = 'x' # c\r\n\r\n[c] # d\r\ne = \"\"\"\r\ny\\\r\n  z\"\"\"\r\n", "{a={b=s\"x\"@2}@1h,c={e=s\"yz\"@5}@4h}@1"),
        // Strings.
        ("a = \"tab\there\"", "{a=s\"tab\\there\"@1}@1"),
        (#"a = "\b\t\n\f\r\"\\\u00e9\U0001F600""#, "{a=s\"\\u{08}\\t\\n\\u{0C}\\r\\\"\\\\é😀\"@1}@1"),
        (#"a = 'C:\Users\nodejs\templates'"#, #"{a=s"C:\\Users\\nodejs\\templates"@1}@1"#),
        ("a = \"é 漢字\"", "{a=s\"é 漢字\"@1}@1"),
        ("a = \"\"\"\nRoses are red\nViolets are blue\"\"\"\nb = 1", "{a=s\"Roses are red\\nViolets are blue\"@1,b=i1@4}@1"),
        ("a = \"\"\"\nThe quick brown \\\n\n\n  fox jumps \\   \n  over.\"\"\"", "{a=s\"The quick brown fox jumps over.\"@1}@1"),
        ("a = \"\"\"Two quotes: \"\". Fine.\"\"\"", "{a=s\"Two quotes: \\\"\\\". Fine.\"@1}@1"),
        ("a = \"\"\"\"quoted\"\"\"\"", "{a=s\"\\\"quoted\\\"\"@1}@1"),
        ("a = \"\"\"\"\"\"", "{a=s\"\"@1}@1"),
        ("a = \"\"\"\"\"\"\"\"", "{a=s\"\\\"\\\"\"@1}@1"),
        ("a = '''\nfirst newline trimmed\n   rest kept\n'''", "{a=s\"first newline trimmed\\n   rest kept\\n\"@1}@1"),
        ("a = '''I [dw]on't need \\d{2} apples'''", "{a=s\"I [dw]on\\'t need \\\\d{2} apples\"@1}@1"),
        ("a = ''''quoted''''", "{a=s\"\\'quoted\\'\"@1}@1"),
        // Integers.
        ("a = +99\nb = 42\nc = 0\nd = -17\ne = 1_000\nf = 5_349_221\ng = +0\nh = -0\ni = +1_000",
         "{a=i99@1,b=i42@2,c=i0@3,d=i-17@4,e=i1000@5,f=i5349221@6,g=i0@7,h=i0@8,i=i1000@9}@1"),
        ("a = 0xDEADBEEF\nb = 0xdead_beef\nc = 0o01234567\nd = 0o755\ne = 0b11010110\nf = 0x0",
         "{a=i3735928559@1,b=i3735928559@2,c=i342391@3,d=i493@4,e=i214@5,f=i0@6}@1"),
        ("a = 9223372036854775807\nb = -9223372036854775808\nc = 0x7FFFFFFFFFFFFFFF",
         "{a=i9223372036854775807@1,b=i-9223372036854775808@2,c=i9223372036854775807@3}@1"),
        // Floats.
        ("a = +1.0\nb = 3.1415\nc = -0.01\nd = 5e+22\ne = 1e06\nf = -2E-2\ng = 224_617.445_991_228\nh = 0.5e-3\ni = 0e0\nj = -0.0",
         "{a=f1.0@1,b=f3.1415@2,c=f-0.01@3,d=f5e+22@4,e=f1000000.0@5,f=f-0.02@6,g=f224617.445991228@7,h=f0.0005@8,i=f0.0@9,j=f-0.0@10}@1"),
        ("a = inf\nb = +inf\nc = -inf\nd = nan\ne = +nan", "{a=finf@1,b=finf@2,c=f-inf@3,d=fnan@4,e=fnan@5}@1"),
    ]

    @Test(arguments: accepted)
    func acceptedForms(_ text: String, _ expected: String) throws {
        #expect(try Self.describe(TOMLReader.read(text)) == expected, "\(text.debugDescription)")
    }

    @Test func integersAndFloatsStayApart() throws {
        let table = try TOMLReader.read("a = 1\nb = 1.0\nc = -nan")
        #expect(table["a"]?.integer == 1 && table["a"]?.float == nil)
        #expect(table["b"]?.float == 1 && table["b"]?.integer == nil)
        #expect(table["c"]?.float?.isNaN == true)
    }

    static let refused: [(String, Int, String)] = [
        // What authd's configuration does not use, by name.
        ("a = [1, 2]", 1, "arrays are not used in authd's configuration"),
        // A hostile file's nesting is bounded (the tree is read recursively).
        ("x = 1\n[" + Array(repeating: "a", count: 50_000).joined(separator: ".") + "]", 2, "a key of more than 16 parts"),
        (Array(repeating: "b", count: 17).joined(separator: ".") + " = 1", 1, "a key of more than 16 parts"),
        ("\n\na = { x = 1 }", 3, "inline tables ({ … }) are not used in authd's configuration"),
        ("x = 1\n[[a]]", 2, "arrays of tables ([[…]]) are not used in authd's configuration"),
        ("a = 1979-05-27", 1, "dates and times are not used in authd's configuration"),
        ("a = 1979-05-27T07:32:00Z", 1, "dates and times are not used"),
        ("a = 1979-05-27 07:32:00", 1, "dates and times are not used"),
        ("a = 07:32:00", 1, "dates and times are not used"),
        // Keys and tables defined twice.
        ("a = 1\na = 2", 2, "duplicate key 'a' (first set on line 1)"),
        ("a.b = 1\n\na.b = 2", 3, "duplicate key 'a.b' (first set on line 1)"),
        ("a = 1\n\"a\" = 2", 2, "duplicate key 'a'"),
        ("a = 1\n'a' = 2", 2, "duplicate key 'a'"),
        ("[p]\n\"x.y\" = 1\n'x.y' = 2", 3, "duplicate key 'p.\"x.y\"'"),
        ("[a]\nb = 1\n[a]", 3, "the table [a] is defined twice (first on line 1)"),
        ("x = 1\n\n[a]\nb = 1\n[ a ]", 5, "the table [a] is defined twice (first on line 3)"),
        ("a = 1\n[a]", 2, "'a' already has a value (line 1); it cannot also be a table"),
        ("a = 1\na.b = 2", 2, "'a' already has a value (line 1); it cannot also be a table"),
        ("a.b = 1\na = 2", 2, "'a' is already a table (line 1); it cannot also be a value"),
        ("[a]\nb = 1\n[a.b]", 3, "'a.b' already has a value (line 2)"),
        ("a.b = 1\n[a]", 2, "the table [a] is already defined by the dotted keys on line 1"),
        ("[fruit]\napple.color = \"red\"\n[fruit.apple]", 3, "the table [fruit.apple] is already defined by the dotted keys on line 2"),
        ("[a.b.c]\nz = 9\n[a]\nb.c.t = 1", 4, "the table [a.b.c] is defined by its header on line 1"),
        ("[a.b]\n[a]\nb.c = 1", 3, "the table [a.b] is defined by its header on line 1"),
        ("[a]\nb.c = 1\n[x]\n[a.b.d]\n[a]\nb.e = 2", 5, "the table [a] is defined twice"),
        // Strings.
        ("a = \"abc", 1, "the string is not closed"),
        ("a = \"abc\nb = 1", 1, "the string is not closed"),
        ("a = 'abc", 1, "the string is not closed"),
        ("x = 1\na = \"\"\"abc\n\n", 2, "the multi-line string opened here is not closed"),
        ("a = '''abc", 1, "the multi-line string opened here is not closed"),
        ("\"\"\"a\"\"\" = 1", 1, "a key cannot be a multi-line string"),
        ("a = \"\\x41\"", 1, "invalid escape: a backslash followed by 'x'"),
        ("a = \"\\e\"", 1, "invalid escape"),
        ("a = \"\"\"\n\\ x\"\"\"", 2, "invalid escape: a backslash followed by ' '"),
        ("a = \"\\u12\"", 1, "\\u must be followed by 4 hexadecimal digits"),
        ("a = \"\\uD800\"", 1, "\\uD800 is not a Unicode scalar value"),
        ("a = \"\\U00110000\"", 1, "\\U00110000 is not a Unicode scalar value"),
        ("a = \"a\u{01}b\"", 1, "control character U+0001 in a string"),
        ("a = \"a\u{7F}b\"", 1, "control character U+007F in a string"),
        ("a = 'a\u{00}b'", 1, "control character U+0000 in a literal string"),
        ("a = \"\"\"\n\na\rb\"\"\"", 3, "control character U+000D in a string"),
        ("a = 1 # x\u{01}", 1, "control character U+0001 in a comment"),
        ("a = 1\rb = 2", 1, "a carriage return must be followed by a line feed"),
        // Garbage after a value or header; a missing '=', key or value.
        ("a = \"x\" y", 1, "unexpected 'y' after the value"),
        ("a = 1 2", 1, "unexpected '2' after the value"),
        ("a = \"x\" \"y\"", 1, "unexpected '\"' after the value"),
        ("a = \"\"\"\"\"\"\"\"\"", 1, "after the value"),
        ("[a] b = 1", 1, "unexpected 'b' after the table header"),
        ("\n\nkey value", 3, "expected '=' after the key 'key', found 'v'"),
        ("key", 1, "expected '=' after the key 'key', found the end of the file"),
        ("key\nvalue = 1", 1, "expected '=' after the key 'key', found the end of the line"),
        ("a =", 1, "a value is missing after '='"),
        ("a = # x", 1, "a value is missing after '='"),
        ("= 1", 1, "expected a key, found '='"),
        ("é = 1", 1, "expected a key, found 'é'"),
        ("a..b = 1", 1, "expected a key, found '.'"),
        ("[a.]", 1, "expected a key, found ']'"),
        ("[]", 1, "expected a key, found ']'"),
        ("[a", 1, "expected ']' at the end of the table header, found the end of the file"),
        ("[profiles.a\nurl = 1", 1, "expected ']' at the end of the table header, found the end of the line"),
        // Numbers and other words.
        ("a = 0123", 1, "'0123': leading zeros are not allowed"),
        ("a = -01", 1, "leading zeros are not allowed"),
        ("a = 00.5", 1, "leading zeros are not allowed"),
        ("a = 1__0", 1, "'1__0' is not a number ('_' may only stand between two digits)"),
        ("a = 1_", 1, "is not a number"),
        ("a = 1_.5", 1, "is not a number"),
        ("a = 1._5", 1, "is not a number"),
        ("a = .5", 1, "'.5' is not a number (a '.' needs a digit on each side)"),
        ("a = 5.", 1, "'5.' is not a number (a '.' needs a digit on each side)"),
        ("a = 1e", 1, "'1e' is not a number (an exponent needs digits)"),
        ("a = 1.5e_5", 1, "an exponent needs digits"),
        ("a = +0x10", 1, "'+0x10': a hexadecimal, octal or binary integer takes no sign"),
        ("a = 0xG", 1, "'0xG' is not a number"),
        ("a = 0o8", 1, "'0o8' is not a number"),
        ("a = 0b2", 1, "'0b2' is not a number"),
        ("a = 0X10", 1, "'0X10' is not a number"),
        ("a = 9223372036854775808", 1, "'9223372036854775808' does not fit in a 64-bit integer"),
        ("a = 0xFFFFFFFFFFFFFFFF", 1, "does not fit in a 64-bit integer"),
        ("a = 1,2", 1, "'1,2' is not a number"),
        ("a = -", 1, "'-' is not a number"),
        ("a = yes", 1, "'yes' is not a value: a string goes in quotes"),
        ("a = True", 1, "'True' is not a value"),
        ("a = truex", 1, "'truex' is not a value"),
        ("a = infinity", 1, "'infinity' is not a value"),
    ]

    @Test(arguments: refused)
    func refusalsNameTheirLine(_ text: String, _ line: Int, _ fragment: String) {
        #expect {
            _ = try TOMLReader.read(text)
        } throws: { error in
            guard let failure = error as? TOMLReader.Failure else { return false }
            return failure.line == line && failure.message.contains(fragment)
        }
    }

    @Test func keyPathsQuoteWhatIsNotBare() {
        #expect(TOMLReader.keyPath(["profiles", "work", "url"]) == "profiles.work.url")
        #expect(TOMLReader.keyPath(["profiles", "my.profile"]) == "profiles.\"my.profile\"")
        #expect(TOMLReader.keyPath(["", "a b", "é"]) == "\"\".\"a b\".\"é\"")
        #expect(TOMLReader.quoted("a\"b\\c\nd\u{01}") == "\"a\\\"b\\\\c\\nd\\u0001\"")
    }

    @Test func quotedStringsReadBackAsWritten() throws {
        let text = "tab\t, quote \", backslash \\, newline\n, bell \u{07}, é"
        #expect(try TOMLReader.read("a = " + TOMLReader.quoted(text))["a"]?.string == text)
    }

    @Test func headerLinesAreTheTablesDefinedByHeaders() throws {
        let table = try TOMLReader.read("x.y = 1\n[a.b]\n[c]\nd.e = 2\n[a]\n")
        #expect(table.headerLines.sorted() == [2, 3, 5])
    }
}
