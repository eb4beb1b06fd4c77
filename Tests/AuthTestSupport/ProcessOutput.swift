import Foundation

/// What a process that ran to its end wrote.
public struct ProcessOutput: Sendable {
    /// Its standard output.
    public var stdout: String
    /// Its standard error.
    public var stderr: String
}

extension Process {
    /// Runs the process to its end and returns what it wrote, through temporary files.
    ///
    /// Not through pipes: Foundation makes them without close-on-exec, and a spawn closes in the
    /// child only the descriptors that were open when it began. A long-lived child that another
    /// test spawned at the same moment can inherit a pipe's write end, and reading to the end of
    /// that pipe then waits until that child exits.
    public func runCollectingOutput() throws -> ProcessOutput {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-output-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("out"), errURL = directory.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        standardOutput = try FileHandle(forWritingTo: outURL)
        standardError = try FileHandle(forWritingTo: errURL)
        try run()
        waitUntilExit()
        return ProcessOutput(stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
                             stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}
