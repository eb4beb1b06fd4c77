#if canImport(Glibc)
import Glibc
#endif

/// authctl-full, the whole command-line tool, which the front becomes by exec.
enum FullCommand {
    /// The executable's name, beside the front in a build folder, or in `libexec/authd` under the
    /// install prefix (`make install`).
    static let name = "authctl-full"

    /// Replaces this process with authctl-full, given the same arguments. With `answer`, the
    /// answer the front already received to its token request is handed over on a pipe
    /// (`token … --answer-fd N`), so authctl-full interprets it instead of asking again: asking
    /// again would come from another executable, which an app policy of `ask` treats as a new app.
    static func run(_ arguments: [String], answer: [UInt8]?) -> Never {
        guard let executable = locate() else {
            fail("cannot find \(name) beside \(ownPath() ?? "authctl") or in ../libexec/authd; reinstall authctl (make install)")
        }
        var passed = arguments
        if let answer, let descriptor = handOver(answer) { passed += ["--answer-fd", String(descriptor)] }
        var pointers = passed.map { strdup($0) }
        pointers.append(nil)
        execv(executable, pointers)
        fail("cannot run \(executable): \(String(cString: strerror(errno)))")
    }

    /// A pipe's read end holding `answer`; nil when it could not be made or the answer does not
    /// fit (then authctl-full asks again).
    private static func handOver(_ answer: [UInt8]) -> Int32? {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        // The write end must not block: nobody reads until after exec.
        _ = fcntl(ends[1], F_SETFL, O_NONBLOCK)
        let line = answer + [0x0A]
        let written = line.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        guard written == line.count else {
            close(ends[0])
            return nil
        }
        return ends[0]
    }

    /// authctl-full beside this executable, else in `../libexec/authd`.
    private static func locate() -> String? {
        guard let own = ownPath(), let slash = own.lastIndex(of: "/") else { return nil }
        let directory = String(own[..<slash])
        let candidates = [directory + "/" + name, directory + "/../libexec/authd/" + name]
        return candidates.first { access($0, X_OK) == 0 }
    }

    /// This executable's path, from `/proc/self/exe`.
    private static func ownPath() -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let count = buffer.withUnsafeMutableBytes {
            readlink("/proc/self/exe", $0.baseAddress!.assumingMemoryBound(to: CChar.self), $0.count)
        }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    private static func fail(_ message: String) -> Never {
        let line = Array("authctl: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        exit(1)
    }
}
