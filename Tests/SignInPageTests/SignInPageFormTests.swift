import SignInPage
import Testing

/// Forms are read strictly: all of a well-formed body, or none of a bad one.
@Suite struct SignInPageFormTests {
    static func parse(_ text: String) -> SignInPageForm? { SignInPageForm.parse(Array(text.utf8)) }

    @Test func fieldsAreDecodedAsBrowsersEncodeThem() throws {
        let form = try #require(Self.parse("email=a%40example.com&password=p%C3%A4ss+word%2B%26%3D&csrf_token=abc&empty=&flag"))
        #expect(form[.email] == "a@example.com")
        #expect(form[.password] == "päss word+&=")
        #expect(form["empty"] == "")
        #expect(form["flag"] == "")
        #expect(form["missing"] == nil)
        #expect(Self.parse("a=1&&b=2&") == SignInPageForm(["a": "1", "b": "2"]))
        #expect(Self.parse("") == SignInPageForm())
    }

    @Test(arguments: ["a=%", "a=%4", "a=%zz", "a=%C3", "%FF=1", "a=1&a=2", "a=1&A=2&a=3"])
    func aMalformedFormIsRefusedWhole(_ text: String) {
        #expect(Self.parse(text) == nil)
    }

    @Test func aFieldNamedTwiceIsRefusedButCaseMakesAnotherField() {
        #expect(Self.parse("a=1&A=2") == SignInPageForm(["a": "1", "A": "2"]))
    }

    @Test func atMostThirtyTwoFields() {
        let fields = (0..<SignInPageForm.maximumFields).map { "f\($0)=1" }
        #expect(Self.parse(fields.joined(separator: "&"))?.values.count == SignInPageForm.maximumFields)
        #expect(Self.parse((fields + ["one=more"]).joined(separator: "&")) == nil)
    }

    @Test func theDescriptionNamesFieldsNeverValues() {
        let form = SignInPageForm(["password": "hunter2-secret", "email": "a@example.com"])
        for text in [String(describing: form), String(reflecting: form), { var out = ""; dump(form, to: &out); return out }()] {
            #expect(!text.contains("hunter2-secret"), "\(text)")
            #expect(!text.contains("a@example.com"), "\(text)")
        }
        #expect(String(describing: form) == "SignInPageForm(email, password)")
    }
}
