import AuthTestSupport
import CSystemd
import Foundation

/// One sd-bus connection to a bus, optionally owning a well-known name: a fake logind (owning
/// `org.freedesktop.login1`) or an impostor sending the same signal from an unnamed connection.
final class BusPeer: @unchecked Sendable {
    // Unchecked: used from one test at a time.
    private let bus: OpaquePointer

    init(address: String, owning name: String?) throws {
        bus = try PrivateBus.connect(address: address)
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
