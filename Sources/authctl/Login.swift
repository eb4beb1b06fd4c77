import ArgumentParser
import AuthdClient
import AuthProtocol
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `authctl login`: email + password sign-in.
struct Login: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sign in with email and password.",
        discussion: "The password is read from the terminal without echo, or from standard input with --password-stdin.")

    @OptionGroup var global: GlobalOptions

    @Option(help: "The account's email address.")
    var email: String

    @Flag(name: .customLong("password-stdin"), help: "Read the password from standard input (first line).")
    var passwordStdin = false

    func run() throws {
        try runReporting {
            let password = try passwordStdin ? PasswordReader.fromStandardInput() : PasswordReader.fromTerminal(prompt: "Password for \(email): ")
            guard !password.isEmpty else { throw Failure("the password is empty", .signInRefused) }
            let connection = try global.connect()
            let status = try connection.call(Methods.SignInWithPassword.self,
                                             .init(profile: global.profile, email: email, password: password), timeout: 60)
            FileHandle.standardError.write(Data("Signed in as \(status.user?.email ?? email) (profile \(status.profile)).\n".utf8))
        }
    }
}

/// Reads a password without echoing it.
enum PasswordReader {
    static func fromStandardInput() throws -> String {
        guard let line = readLine(strippingNewline: true) else {
            throw Failure("no password on standard input", .signInRefused)
        }
        return line
    }

    static func fromTerminal(prompt: String) throws -> String {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            throw Failure("no terminal to ask for the password; pass it on standard input with --password-stdin", .failure)
        }
        defer { close(fd) }
        var original = termios()
        tcgetattr(fd, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(fd, TCSAFLUSH, &silent)
        defer {
            tcsetattr(fd, TCSAFLUSH, &original)
            _ = write(fd, "\n", 1)
        }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
