/// The fields of a posted form, or of a URL's query: `application/x-www-form-urlencoded`, read
/// strictly. A body that is not well formed (a bad `%` escape, text that is not UTF-8, a field
/// named twice, more than `maximumFields`) is refused whole, never half read.
///
/// Fields hold passwords and codes, so the description and the mirror name the fields only.
public struct SignInPageForm: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    /// The most fields a form may have: the page's largest has five.
    public static let maximumFields = 32

    /// Each field's value, by name.
    public let values: [String: String]

    /// A form of these fields.
    public init(_ values: [String: String] = [:]) {
        self.values = values
    }

    /// The value of the field `name`, if the form has one.
    public subscript(name: String) -> String? { values[name] }

    /// The value of `field`, if the form has one.
    public subscript(field: SignInPageView.Field) -> String? { values[field.rawValue] }

    /// The form in `encoded` (a request body, or a query without its `?`); nil when it is not
    /// well formed. `+` is a space, `%XX` a byte; empty parts (`a=1&&b=2`) are skipped.
    public static func parse(_ encoded: some Collection<UInt8>) -> SignInPageForm? {
        var values: [String: String] = [:]
        for part in encoded.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            guard values.count < maximumFields else { return nil }
            let equals = part.firstIndex(of: UInt8(ascii: "="))
            let name = equals.map { part[part.startIndex..<$0] } ?? part[...]
            let value = equals.map { part[part.index(after: $0)...] } ?? part[part.endIndex...]
            guard let decodedName = decode(name), let decodedValue = decode(value),
                  values.updateValue(decodedValue, forKey: decodedName) == nil else { return nil }
        }
        return SignInPageForm(values)
    }

    /// The text `bytes` stand for: `+` as a space, `%XX` as the byte XX, the result UTF-8.
    static func decode(_ bytes: some Collection<UInt8>) -> String? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            bytes.formIndex(after: &index)
            switch byte {
            case UInt8(ascii: "+"):
                decoded.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index != bytes.endIndex, let high = hexValue(bytes[index]) else { return nil }
                bytes.formIndex(after: &index)
                guard index != bytes.endIndex, let low = hexValue(bytes[index]) else { return nil }
                bytes.formIndex(after: &index)
                decoded.append(high << 4 | low)
            default:
                decoded.append(byte)
            }
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// The value of one hexadecimal digit, either case.
    static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The fields' names, sorted; never a value.
    public var description: String { "SignInPageForm(\(values.keys.sorted().joined(separator: ", ")))" }

    /// Only what `description` shows, so that `dump` shows no value either.
    public var customMirror: Mirror { Mirror(self, children: ["fields": values.keys.sorted()]) }
}
