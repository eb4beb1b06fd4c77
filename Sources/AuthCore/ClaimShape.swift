import FoundationEssentials

/// Conservative shapes of the addresses and names a token's claims carry, for the uses that put
/// them before people as something to act on (the "sign in again" notice's command). A value
/// outside its shape is not used at all: the claims come from the server, and a notice built
/// from `a@b.c; touch x` would show that as the thing to run. Real values fall well inside.
public enum ClaimShape {
    /// A plain email address: a local part of ASCII letters, digits and the other characters an
    /// unquoted local part may hold (`!#$%&'*+/=?^_`{|}~.-`, what GoTrue's address check takes),
    /// not starting with `-` (at most 64), `@`, and a domain of dot-separated labels of letters,
    /// digits and `-` (at most 253). Quoted local parts, spaces, control characters and anything
    /// outside ASCII are left out on purpose: the command the value goes into is quoted for the
    /// shell, but a person reads it first.
    public static func isEmail(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...64).contains(parts[0].utf8.count), (1...253).contains(parts[1].utf8.count),
              parts[0].utf8.first != UInt8(ascii: "-") else { return false }
        let local = parts[0].utf8.allSatisfy { isLetterOrDigit($0) || Array("!#$%&'*+/=?^_`{|}~.-".utf8).contains($0) }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        let domain = labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
        }
        return local && domain
    }

    /// A phone number as GoTrue keeps it: 5 to 15 digits (E.164's longest), with or without a
    /// leading `+`.
    public static func isPhone(_ text: String) -> Bool {
        let digits = text.hasPrefix("+") ? text.utf8.dropFirst() : text.utf8[...]
        return (5...15).contains(digits.count) && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// An OAuth provider's name (`github`, `linkedin_oidc`, `custom:acme`): a letter or digit,
    /// then up to 63 letters, digits and `_.:-`. Never an option's leading `-`.
    public static func isProviderName(_ text: String) -> Bool {
        guard let first = text.utf8.first, isLetterOrDigit(first), text.utf8.count <= 64 else { return false }
        return text.utf8.allSatisfy { isLetterOrDigit($0) || Array("_.:-".utf8).contains($0) }
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
