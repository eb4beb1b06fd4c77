/// Reading a plain token out of authd's answer line without a JSON decoder.
enum TokenAnswer {
    /// The access token when `line` is a successful answer to request `id` holding exactly one
    /// token made of JWT characters; nil for anything else (errors, notices, odd shapes), which
    /// authctl-full then interprets with a real decoder.
    static func plainToken(in line: [UInt8], id: Int) -> [UInt8]? {
        let key = Array(#""access_token":""#.utf8)
        guard contains(line, Array(#""result":{"#.utf8)), !contains(line, Array(#""error""#.utf8)),
              contains(line, Array(#""id":\#(id),"#.utf8)) || contains(line, Array(#""id":\#(id)}"#.utf8)),
              let start = range(of: key, in: line)?.upperBound else { return nil }
        guard let end = line[start...].firstIndex(of: UInt8(ascii: "\"")), end > start else { return nil }
        let token = Array(line[start..<end])
        guard token.allSatisfy(isTokenCharacter), range(of: key, in: Array(line[end...])) == nil else { return nil }
        return token
    }

    /// Letters, digits, `-`, `_` and `.`: what JWTs are made of.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
    }

    // By hand rather than the standard library's `firstRange(of:)`: that pulls the string
    // processing library into this statically linked front, 2 MB more and about 0.6 ms more per
    // `authctl token` (hyperfine, P2).
    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool { range(of: needle, in: haystack) != nil }

    private static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }
}
