import CSystemd
import Foundation

/// A private dbus-daemon standing in for the system bus (CI containers have none), started in
/// the stack's directory and stopped with it.
final class FakeSystemBus: @unchecked Sendable {
    // Unchecked: used from one test at a time.
    let address: String
    private let daemon: Spawned

    init(in stack: Stack) throws {
        let socket = stack.directory.appendingPathComponent("system_bus_socket").path
        let config = Binaries.repositoryRoot.appendingPathComponent("scripts/dbus-session-no-activation.conf").path
        daemon = try Spawned("/usr/bin/dbus-daemon", ["--config-file=\(config)", "--address=unix:path=\(socket)", "--nofork", "--print-address"],
                             environment: stack.environment, in: stack.directory, name: "system-bus")
        guard daemon.waitForOutput({ $0.contains("unix:path=") }) else { throw StackError("dbus-daemon did not start: \(daemon.stderr)") }
        address = "unix:path=\(socket)"
    }

    func stop() { daemon.stop() }
}

/// One sd-bus connection to a bus, optionally owning a well-known name: a fake logind (owning
/// `org.freedesktop.login1`) or an impostor sending the same signal from an unnamed connection.
final class BusPeer: @unchecked Sendable {
    // Unchecked: used from one test at a time.
    private let bus: OpaquePointer

    init(address: String, owning name: String?) throws {
        var bus: OpaquePointer?
        guard sd_bus_new(&bus) >= 0, let bus else { throw StackError("sd_bus_new failed") }
        self.bus = bus
        guard sd_bus_set_address(bus, address) >= 0, sd_bus_set_bus_client(bus, 1) >= 0, sd_bus_start(bus) >= 0 else {
            throw StackError("cannot connect to \(address)")
        }
        if let name {
            let result = sd_bus_request_name(bus, name, 0)
            guard result >= 0 else { throw StackError("cannot own \(name): \(String(cString: strerror(-result)))") }
        }
    }

    /// Sends logind's `PrepareForSleep(sleeping)` from this connection.
    func sendPrepareForSleep(_ sleeping: Bool) throws {
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "PrepareForSleep") >= 0,
              let message else { throw StackError("cannot create the signal") }
        defer { sd_bus_message_unref(message) }
        var value: Int32 = sleeping ? 1 : 0
        guard sd_bus_message_append_basic(message, CChar(UInt8(ascii: "b")), &value) >= 0,
              sd_bus_send(bus, message, nil) >= 0, sd_bus_flush(bus) >= 0 else { throw StackError("cannot send the signal") }
    }

    deinit { sd_bus_flush_close_unref(bus) }
}
