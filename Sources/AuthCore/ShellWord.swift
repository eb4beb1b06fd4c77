import FoundationEssentials

/// Words of a command line shown to people to copy into a shell ("Sign in again: authctl login
/// …"). Each is quoted for a POSIX shell, so that the pasted line runs exactly those arguments
/// whatever a word holds: a profile's name is the user's, but other words come from a server.
public enum ShellWord {
    /// `word` as the shell must be given it: as it is when it holds only characters no shell
    /// treats specially, else in single quotes (a quote inside written `'\''`).
    public static func quoted(_ word: String) -> String {
        if !word.isEmpty, word.utf8.allSatisfy(isPlain) { return word }
        return "'" + word.replacing("'", with: #"'\''"#) + "'"
    }

    /// `words` quoted and joined by spaces.
    public static func commandLine(_ words: [String]) -> String {
        words.map(quoted).joined(separator: " ")
    }

    /// ASCII letters and digits and `@%+=:,./_-`: nothing that splits, expands, redirects,
    /// globs or ends a command (`~` only expands at a word's start, but is left out all the same).
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return Array("@%+=:,./_-".utf8).contains(byte)
        }
    }
}
