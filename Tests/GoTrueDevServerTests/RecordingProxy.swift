import AuthTestSupport
import Foundation

/// Tests/python/connect_proxy.py in a process of its own: a CONNECT proxy that logs every
/// connection it accepts and every tunnel it opens.
struct RecordingProxy {
    let process: ChildProcess
    let directory: URL
    let port: Int

    /// Everything the proxy has logged so far.
    var log: String { (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? "" }

    /// Starts the proxy; with `upstream` (host:port) every tunnel goes there, whatever host it names.
    static func start(upstream: String? = nil) async throws -> RecordingProxy {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-proxy-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let portFile = directory.appendingPathComponent("port")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("python/connect_proxy.py")
        let process = try ChildProcess("/usr/bin/python3", [script.path, portFile.path, directory.appendingPathComponent("log").path] + (upstream.map { [$0] } ?? []),
                                       environment: ProcessInfo.processInfo.environment,
                                       stdout: directory.appendingPathComponent("stdout").path, stderr: directory.appendingPathComponent("stderr").path)
        for _ in 0..<200 {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text) {
                return RecordingProxy(process: process, directory: directory, port: port)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.stop(grace: 0)
        throw CocoaError(.fileReadNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "the proxy did not start"])
    }

    /// Stops the proxy and removes its files.
    func stop() {
        process.stop(grace: 0)
        try? FileManager.default.removeItem(at: directory)
    }
}
