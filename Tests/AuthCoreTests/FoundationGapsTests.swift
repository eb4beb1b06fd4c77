import FoundationEssentials
import FoundationGaps
import Testing

/// What FoundationGaps stands in for, checked against what Foundation did.
@Suite struct FoundationGapsTests {
    @Test func fileErrorsReadAsTheFileAndTheSystemsReason() {
        do {
            _ = try Data(contentsOf: URL(fileURLWithPath: "/nonexistent-authd-test/config.toml"))
            Issue.record("read a file that does not exist")
        } catch {
            #expect(error.readableDescription == "cannot read /nonexistent-authd-test/config.toml: No such file or directory")
        }
    }

    @Test func localizedErrorsKeepTheirDescription() {
        struct Described: LocalizedError { var errorDescription: String? { "said so" } }
        #expect(Described().readableDescription == "said so")
    }

    @Test func trimmingAndColumns() {
        #expect(" \t a b \n".trimmingWhitespace() == "a b")
        #expect("[::1]".trimming { $0 == "[" || $0 == "]" } == "::1")
        #expect("ab".padded(to: 4) == "ab  " && "abcdef".padded(to: 4) == "abcd")
    }

    @Test func markupIsEscapedScalarByScalar() {
        #expect("a<b>&c".escapingMarkup == "a&lt;b&gt;&amp;c")
        // "<" with a combining long solidus overlay is one Character, and still a "<" to a parser.
        #expect("<\u{338}script>".escapingMarkup == "&lt;\u{338}script&gt;")
    }

    @Test(arguments: [("/a/b/c", "/a/b", "c"), ("/a", "/", "a"), ("c", ".", "c"), ("/a/b/", "/a", "b"), ("/", "/", "/")])
    func pathsAsText(_ path: String, _ directory: String, _ last: String) {
        #expect(path.pathDirectory == directory)
        #expect(path.pathLastComponent == last)
    }

    @Test func jsonValuesRoundTripAndReadNumbers() throws {
        let value = try JSONValue(parsing: Data(#"{"a":[1,2.5,"x",true,null],"b":{"c":3}}"#.utf8))
        #expect(value["a"] == .array([.integer(1), .number(2.5), .string("x"), .bool(true), .null]))
        #expect(value["b"]?["c"]?.numberValue == 3)
        #expect(try JSONValue(parsing: value.encoded()) == value)
        #expect(throws: (any Error).self) { try JSONValue(parsing: Data("{".utf8)) }
    }
}
