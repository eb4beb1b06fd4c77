/// A bounds-checked reader of DER (the encoding of X.509 certificates), for the few fields a
/// refusal message names. Whatever the bytes, a malformed element gives nil; nothing traps.
struct DERElement {
    /// The identifier octet: class, constructed bit and tag number (low tag numbers only).
    var tag: UInt8
    /// The content octets.
    var content: ArraySlice<UInt8>

    static let sequence: UInt8 = 0x30
    static let set: UInt8 = 0x31
    static let objectIdentifier: UInt8 = 0x06
    static let octetString: UInt8 = 0x04

    /// The elements that fill `bytes` exactly, in order; nil when they do not.
    static func elements(in bytes: ArraySlice<UInt8>) -> [DERElement]? {
        var elements: [DERElement] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            guard let element = next(in: bytes, at: &index) else { return nil }
            elements.append(element)
        }
        return elements
    }

    /// The elements inside this one, when it is constructed.
    var children: [DERElement]? { tag & 0x20 != 0 ? Self.elements(in: content) : nil }

    private static func next(in bytes: ArraySlice<UInt8>, at index: inout Int) -> DERElement? {
        guard index < bytes.endIndex else { return nil }
        let tag = bytes[index]
        // High tag numbers (0x1f) never occur in the fields read here.
        guard tag & 0x1f != 0x1f, index + 1 < bytes.endIndex else { return nil }
        var cursor = index + 1
        let first = bytes[cursor]
        cursor += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            // Long form with up to four length octets: at most 4 GiB, which no Int overflows on.
            let count = Int(first & 0x7f)
            guard (1...4).contains(count), cursor + count <= bytes.endIndex else { return nil }
            for octet in bytes[cursor..<(cursor + count)] { length = length << 8 | Int(octet) }
            cursor += count
        }
        guard length <= bytes.endIndex - cursor else { return nil }
        index = cursor + length
        return DERElement(tag: tag, content: bytes[cursor..<index])
    }
}
