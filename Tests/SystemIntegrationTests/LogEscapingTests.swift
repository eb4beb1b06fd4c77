import Logging
import SystemIntegration
import Testing

/// What `LogEscaping` does to the text that goes into a log line.
@Suite struct LogEscapingTests {
    @Test func aNewlineCannotStartALineOfItsOwn() {
        #expect(LogEscaping.escape("/tmp/x\nPRIORITY=0\nMESSAGE=forged") == #"/tmp/x\nPRIORITY=0\nMESSAGE=forged"#)
        #expect(LogEscaping.escape("a\r\n<0>b\tc") == #"a\r\n<0>b\tc"#)
    }

    @Test func everyControlCharacterIsEscaped() {
        let controls = (0x00...0x1F).map { $0 } + [0x7F] + (0x80...0x9F).map { $0 }
        for value in controls {
            let scalar = Unicode.Scalar(UInt32(value))!
            let escaped = LogEscaping.escape("a\(Character(scalar))b")
            #expect(escaped.unicodeScalars.allSatisfy { (0x20...0x7E).contains($0.value) }, "U+\(String(value, radix: 16)) gave \(escaped.debugDescription)")
            #expect(escaped.hasPrefix("a\\") && escaped.hasSuffix("b"))
        }
        #expect(LogEscaping.escape("\u{1B}[31mred\u{1B}[0m") == #"\x1b[31mred\x1b[0m"#)
        #expect(LogEscaping.escape("nul\0") == #"nul\x00"#)
        #expect(LogEscaping.escape("del\u{7F}") == #"del\x7f"#)
        #expect(LogEscaping.escape("csi\u{9B}2J") == #"csi\u009b2J"#)
    }

    @Test func separatorsAndBidirectionalControlsAreEscaped() {
        #expect(LogEscaping.escape("a\u{2028}b\u{2029}c") == #"a\u2028b\u2029c"#)
        #expect(LogEscaping.escape("/usr/bin/\u{202E}fdp.exe") == #"/usr/bin/\u202efdp.exe"#)
        #expect(LogEscaping.escape("\u{2066}x\u{2069}") == #"\u2066x\u2069"#)
    }

    @Test func aBackslashIsEscapedSoThatEscapesAreUnambiguous() {
        // A literal backslash-n in a path reads differently from a newline in one.
        #expect(LogEscaping.escape(#"/tmp/a\nb"#) == #"/tmp/a\\nb"#)
        #expect(LogEscaping.escape(#"/tmp/a\nb"#) != LogEscaping.escape("/tmp/a\nb"))
    }

    @Test func ordinaryTextIsKept() {
        for text in ["/usr/bin/python3.11", "/home/zoë/Programme/日本語 app", "org.example.App", "signed in as a@b.c, token valid 54 min", ""] {
            #expect(LogEscaping.escape(text) == text)
        }
    }

    @Test func longTextIsCutWithoutSplittingAnEscape() {
        let long = LogEscaping.escape(String(repeating: "\n", count: 5000))
        #expect(long.unicodeScalars.count <= LogEscaping.limit + 1)
        #expect(long.hasSuffix(#"\n…"#))
        #expect(LogEscaping.escape("\n\n\n", limit: 5) == #"\n\n…"#)
        #expect(LogEscaping.escape("abcdef", limit: 6) == "abcdef")
        #expect(LogEscaping.escape("abcdefg", limit: 6) == "abcdef…")
    }

    @Test func metadataKeysAndNestedValuesAreEscaped() {
        let escaped = LogEscaping.escape(["client.app": "/tmp/x\n<0>y", "k\u{1B}": .array(["a\u{9B}b"]), "pid": .stringConvertible(42)])
        #expect(escaped["client.app"] == .string(#"/tmp/x\n<0>y"#))
        // A list prints as before (its strings quoted), its parts escaped.
        #expect(escaped[#"k\x1b"#] == .string(#"["a\u009bb"]"#))
        #expect(escaped["pid"] == .string("42"))
        #expect(escaped.count == 3)
    }
}
