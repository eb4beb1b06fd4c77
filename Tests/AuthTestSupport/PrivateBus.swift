import Foundation

/// A dbus-daemon of its own that starts nothing on demand, for tests that need a bus nobody else
/// uses. Stopped when released or by `stop()`.
public final class PrivateBus: Sendable {
    /// The address to connect to (`unix:path=…`).
    public let address: String
    private let process: Process
    private let directory: URL

    /// Starts the bus; throws when dbus-daemon is missing or does not come up within 10 s.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        let config = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/dbus-session-no-activation.conf").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(config)", "--address=unix:path=\(socket)", "--nofork"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        address = "unix:path=\(socket)"
        let deadline = Date().addingTimeInterval(10)
        // The socket file appears at bind(), a moment before dbus-daemon listens: connect to be sure.
        while !Self.accepts(socket) {
            guard Date() < deadline, process.isRunning else {
                stop()
                throw PrivateBusError(description: "dbus-daemon did not start listening on \(socket)")
            }
            usleep(20_000)
        }
    }

    private static func accepts(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8.prefix(raw.count - 1))
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
    }

    /// Stops the bus and removes its socket.
    public func stop() {
        if process.isRunning {
            // SIGKILL: a child started from a Dispatch or cooperative-pool thread inherits that
            // thread's blocked signals, SIGTERM among them, and would never see a terminate().
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

/// Why a private bus could not be started.
public struct PrivateBusError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
}
