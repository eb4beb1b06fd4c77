import FoundationEssentials

/// A value that decodes to nil instead of failing what holds it: one element of a list the
/// reader does not understand (a factor of a new kind, an odd identity) must not make the whole
/// answer unreadable. The one such helper in the project.
public struct Lenient<Value: Decodable>: Decodable {
    /// The value, or nil when the JSON there does not decode as one.
    public var value: Value?

    /// Decodes a `Value` if the JSON there is one; never throws.
    public init(from decoder: any Decoder) {
        value = try? Value(from: decoder)
    }
}

extension Lenient: Sendable where Value: Sendable {}
extension Lenient: Equatable where Value: Equatable {}
