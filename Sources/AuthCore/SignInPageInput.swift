import FoundationEssentials

/// What the sign-in page's fields must hold before anything goes to the server, each read as
/// the server should get it. A field that does not pass gives the error to show next to it.
enum SignInPageInput {
    /// The longest email address (RFC 5321's path limit).
    static let maximumEmailLength = 320
    /// The longest code taken: GoTrue's are 6 to 10 digits.
    static let maximumCodeLength = 32

    /// An email address, trimmed: something on both sides of an `@`, no spaces.
    static func email(_ text: String) -> Result<String, SignInPageError> {
        let email = trimmed(text)
        guard !email.isEmpty else { return .failure(.missing(.email)) }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count >= 2, !(parts.first?.isEmpty ?? true), !(parts.last?.isEmpty ?? true), email.utf8.count <= maximumEmailLength,
              !email.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else {
            return .failure(.malformed(.email))
        }
        return .success(email)
    }

    /// A phone number in E.164 form: `+` and 7 to 15 digits, after dropping the spaces, dashes,
    /// dots and parentheses people write them with.
    static func phone(_ text: String) -> Result<String, SignInPageError> {
        let written = trimmed(text)
        guard !written.isEmpty else { return .failure(.missing(.phone)) }
        let number = written.filter { !" -.()".contains($0) }
        let digits = number.dropFirst()
        guard number.hasPrefix("+"), (7...15).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }) else {
            return .failure(.malformed(.phone))
        }
        return .success(number)
    }

    /// A one-time code, without the spaces or dashes it may have been written with: ASCII
    /// letters and digits.
    static func code(_ text: String) -> Result<String, SignInPageError> {
        let code = text.filter { !$0.isWhitespace && $0 != "-" }
        guard !code.isEmpty else { return .failure(.missing(.code)) }
        guard code.count <= maximumCodeLength, code.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }) else {
            return .failure(.malformed(.code))
        }
        return .success(code)
    }

    /// A password as typed (spaces are part of it); only an empty one is refused here, the
    /// server judges the rest.
    static func password(_ text: String, field: SignInPageField = .password) -> Result<String, SignInPageError> {
        text.isEmpty ? .failure(.missing(field)) : .success(text)
    }

    /// An email domain, lower-cased; an address gives its domain (the part after the last `@`).
    static func domain(_ text: String) -> Result<String, SignInPageError> {
        var domain = trimmed(text).lowercased()
        if let at = domain.lastIndex(of: "@") { domain = String(domain[domain.index(after: at)...]) }
        while domain.hasSuffix(".") { domain.removeLast() }
        guard !domain.isEmpty else { return .failure(.missing(.domain)) }
        guard domain.contains("."), domain.utf8.count <= 253,
              domain.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" }) else {
            return .failure(.malformed(.domain))
        }
        return .success(domain)
    }

    /// `text` without the whitespace around it.
    static func trimmed(_ text: String) -> String {
        String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
