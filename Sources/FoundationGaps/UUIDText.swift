/// The one reading of a UUID's text, shared by the wire's parameter rules (AuthProtocol) and the
/// ids the core sends in request paths (AuthCore's `FactorID`), which must agree byte for byte.
public enum UUIDText {
    /// `text` in lower case when it is exactly 36 ASCII characters in the 8-4-4-4-12 hex form of
    /// a UUID; nil for anything else (a NUL, a sign, spaces, path characters, another length).
    public static func canonical(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return nil }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return nil }
            } else {
                guard (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte) else { return nil }
            }
        }
        return text.lowercased()
    }
}
