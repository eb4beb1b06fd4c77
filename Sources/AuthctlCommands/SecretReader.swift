import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Reads passwords and codes from the terminal (passwords without echo) or from standard input.
enum SecretReader {
    /// The next line of standard input.
    static func fromStandardInput(what: String) throws -> String {
        guard let line = readLine(strippingNewline: true) else {
            throw Failure("no \(what) on standard input", .failure)
        }
        return line
    }

    /// A secret the user gives one of two ways: from standard input when `fromStandardInput` (the
    /// command's `standardInputFlag` was given), else typed on the terminal without echo after
    /// `prompt`. `what` names it in the error when standard input has no line for it.
    static func secret(_ what: String, prompt: String, fromStandardInput: Bool, standardInputFlag: String) throws -> String {
        try fromStandardInput ? Self.fromStandardInput(what: what)
            : fromTerminal(prompt: prompt, echo: false, otherwise: "pass it on standard input with \(standardInputFlag)")
    }

    /// Whether there is a controlling terminal to ask on.
    static var hasTerminal: Bool {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    /// A line typed on the controlling terminal after `prompt`; `otherwise` says how to pass
    /// it when there is no terminal.
    static func fromTerminal(prompt: String, echo: Bool, otherwise: String) throws -> String {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure("no terminal to ask on: \(otherwise)", .failure)
        }
        defer { close(fd) }
        var original = termios()
        tcgetattr(fd, &original)
        if !echo {
            var silent = original
            silent.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(fd, TCSAFLUSH, &silent)
        }
        defer {
            if !echo {
                tcsetattr(fd, TCSAFLUSH, &original)
                _ = write(fd, "\n", 1)
            }
        }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
