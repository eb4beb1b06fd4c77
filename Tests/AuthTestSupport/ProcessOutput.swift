import Foundation

/// What a process that ran to its end wrote.
public struct ProcessOutput: Sendable {
    /// Its standard output.
    public var stdout: String
    /// Its standard error.
    public var stderr: String
    /// Its exit status, or 128 + the signal that ended it.
    public var status: Int32 = 0
}

/// A temporary folder with two empty files for a child's standard output and error.
///
/// Files, not pipes: Foundation makes pipes without close-on-exec, and a spawn closes in the
/// child only the descriptors that were open when it began. A long-lived child that another
/// test spawned at the same moment can inherit a pipe's write end, and reading to the end of
/// that pipe (or a child waiting for the end of its input) then waits until that child exits.
public struct OutputFiles: Sendable {
    /// The folder; `remove()` deletes it with everything in it.
    public let directory: URL
    /// Where standard output goes.
    public let stdout: URL
    /// Where standard error goes.
    public let stderr: URL

    /// Creates the folder (only its owner may enter: input and output hold test passwords and
    /// tokens) and the two files.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-output-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        stdout = directory.appendingPathComponent("out")
        stderr = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: stdout.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
    }

    /// What was written so far; bytes that are not UTF-8 become U+FFFD rather than emptying
    /// the text (a check that something is absent must still see the rest).
    public func read() -> ProcessOutput {
        func text(_ url: URL) -> String { String(decoding: (try? Data(contentsOf: url)) ?? Data(), as: UTF8.self) }
        return ProcessOutput(stdout: text(stdout), stderr: text(stderr))
    }

    /// Deletes the folder.
    public func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `executable` to its end and returns what it wrote, through `OutputFiles`, and its exit
/// status. Blocks: call it from a thread of its own (`offPool`), or use the async form.
public func runToEnd(_ executable: String, _ arguments: [String],
                     environment: [String: String] = ProcessInfo.processInfo.environment) throws -> ProcessOutput {
    let files = try OutputFiles()
    defer { files.remove() }
    let child = try ChildProcess(executable, arguments, environment: environment, stdout: files.stdout.path, stderr: files.stderr.path)
    child.waitUntilExit()
    var output = files.read()
    output.status = child.terminationStatus
    return output
}

/// `runToEnd` on a thread of its own, so that waiting never holds a thread of the cooperative pool.
public func runToEnd(_ executable: String, _ arguments: [String],
                     environment: [String: String] = ProcessInfo.processInfo.environment) async throws -> ProcessOutput {
    try await offPool { try runToEnd(executable, arguments, environment: environment) }
}
