import AuthProtocol
import CSystemd
import Foundation

/// A dbus-daemon of its own that starts nothing on demand, for tests that need a bus nobody else
/// uses. Stopped when released or by `stop()`.
public final class PrivateBus: Sendable {
    /// The address to connect to (`unix:path=…`).
    public let address: String
    private let process: ChildProcess
    private let directory: URL

    /// Starts the bus on a thread of its own (the start polls the socket), so that a test on
    /// the cooperative pool never holds one of its threads while dbus-daemon comes up.
    public static func start() async throws -> PrivateBus {
        try await offPool { try PrivateBus() }
    }

    /// Starts the bus; throws when dbus-daemon is missing or does not come up within 10 s.
    /// Blocks: from an async test, use `start()`.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-bus-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        let config = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/dbus-session-no-activation.conf").path
        process = try ChildProcess("/usr/bin/dbus-daemon", ["--config-file=\(config)", "--address=unix:path=\(socket)", "--nofork"],
                                   environment: ProcessInfo.processInfo.environment, stdout: "/dev/null", stderr: "/dev/null")
        address = "unix:path=\(socket)"
        // 30 s: a bound only a failing start reaches, however loaded the machine.
        let deadline = Date().addingTimeInterval(30)
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
        guard let connection = try? LineConnection.connect(path: path) else { return false }
        connection.close()
        return true
    }

    /// A new sd-bus client connection to the bus at `address` (this one or any other), for
    /// stand-ins that own a name or send signals there. The caller closes it
    /// (`sd_bus_flush_close_unref`).
    public static func connect(address: String) throws -> OpaquePointer {
        var bus: OpaquePointer?
        guard sd_bus_new(&bus) >= 0, let bus else { throw PrivateBusError(description: "sd_bus_new failed") }
        guard sd_bus_set_address(bus, address) >= 0, sd_bus_set_bus_client(bus, 1) >= 0, sd_bus_start(bus) >= 0 else {
            sd_bus_unref(bus)
            throw PrivateBusError(description: "cannot connect to \(address)")
        }
        return bus
    }

    /// Stops the bus and removes its socket.
    public func stop() {
        process.signal(SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }
}

/// Why a private bus could not be started.
public struct PrivateBusError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
}
