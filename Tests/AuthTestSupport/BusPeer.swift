import CSystemd
import Foundation

/// One sd-bus connection to a bus, optionally owning a well-known name: a fake logind (owning
/// `org.freedesktop.login1`), or an impostor that sends the signals a service sends, to everyone
/// or addressed to one connection, from a connection that does not own the service's name.
public final class BusPeer: @unchecked Sendable {
    // Unchecked: used from one test at a time, never from two threads at once.
    private let bus: OpaquePointer

    /// Connects to the bus at `address` and, when `name` is given, takes that name (failing when
    /// another connection has it).
    public init(address: String, owning name: String?) throws {
        bus = try PrivateBus.connect(address: address)
        if let name {
            let result = sd_bus_request_name(bus, name, 0)
            guard result >= 0 else {
                sd_bus_flush_close_unref(bus)
                throw PrivateBusError(description: "cannot own \(name): \(String(cString: strerror(-result)))")
            }
        }
    }

    /// This connection's unique name (`:1.N`), which the bus daemon stamps on all it sends.
    public var uniqueName: String {
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return "" }
        return String(cString: name)
    }

    /// Sends logind's `PrepareForSleep(sleeping)` from this connection, to every connection that
    /// listens for it, or only to the connection named `destination`.
    public func sendPrepareForSleep(_ sleeping: Bool, to destination: String? = nil) throws {
        try signal(path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep",
                   to: destination) { message in
            var value: Int32 = sleeping ? 1 : 0
            return sd_bus_message_append_basic(message, Self.type("b"), &value)
        }
    }

    /// Sends the notification server's `ActionInvoked(id, action)`: a click on a button.
    public func sendActionInvoked(id: UInt32, action: String, to destination: String? = nil) throws {
        try signal(path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications", member: "ActionInvoked",
                   to: destination) { message in
            var value = id
            let appended = sd_bus_message_append_basic(message, Self.type("u"), &value)
            guard appended >= 0 else { return appended }
            return action.withCString { sd_bus_message_append_basic(message, Self.type("s"), $0) }
        }
    }

    /// Sends the notification server's `NotificationClosed(id, reason)` (2: dismissed by the user).
    public func sendNotificationClosed(id: UInt32, reason: UInt32 = 2, to destination: String? = nil) throws {
        try signal(path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications", member: "NotificationClosed",
                   to: destination) { message in
            var value = id, why = reason
            let appended = sd_bus_message_append_basic(message, Self.type("u"), &value)
            guard appended >= 0 else { return appended }
            return sd_bus_message_append_basic(message, Self.type("u"), &why)
        }
    }

    /// Sends the bus driver's `NameOwnerChanged(name, oldOwner, newOwner)` from this connection:
    /// a forgery, since only the bus daemon may speak as `org.freedesktop.DBus`.
    public func sendNameOwnerChanged(name: String, oldOwner: String, newOwner: String, to destination: String? = nil) throws {
        try signal(path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged", to: destination) { message in
            for text in [name, oldOwner, newOwner] {
                let appended = text.withCString { sd_bus_message_append_basic(message, Self.type("s"), $0) }
                guard appended >= 0 else { return appended }
            }
            return 0
        }
    }

    /// Gives up `name`; the connection stays on the bus and can still send.
    public func releaseName(_ name: String) throws {
        let result = sd_bus_release_name(bus, name)
        guard result >= 0 else { throw PrivateBusError(description: "cannot release \(name): \(String(cString: strerror(-result)))") }
    }

    /// Returns once the bus daemon has routed everything this connection sent before: it handles
    /// one connection's messages in order, and this waits for its answer to a call made after them.
    public func sync() throws {
        var reply: OpaquePointer?
        var error = sd_bus_error()
        defer {
            sd_bus_message_unref(reply)
            sd_bus_error_free(&error)
        }
        guard Self.callDriver(bus, "GetId", &error, &reply) else { throw PrivateBusError(description: "the bus daemon did not answer") }
    }

    /// Returns once the connection `destination` has answered `org.freedesktop.DBus.Peer.Ping`
    /// (sd-bus answers it by itself, in `sd_bus_process`): it has then handled everything this
    /// connection sent it before, since the bus daemon routes one sender's messages in order and
    /// sd-bus handles what it reads in order.
    public func ping(_ destination: String) throws {
        var reply: OpaquePointer?
        var error = sd_bus_error()
        defer {
            sd_bus_message_unref(reply)
            sd_bus_error_free(&error)
        }
        var call: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &call, destination, "/", "org.freedesktop.DBus.Peer", "Ping") >= 0, let call else {
            throw PrivateBusError(description: "cannot create a Ping to \(destination)")
        }
        defer { sd_bus_message_unref(call) }
        let result = sd_bus_call(bus, call, 0, &error, &reply)
        guard result >= 0 else {
            let name = error.name.map { String(cString: $0) } ?? String(cString: strerror(-result))
            throw PrivateBusError(description: "\(destination) did not answer Ping: \(name)")
        }
    }

    /// The unique name of a connection that process `pid` has on this bus, other than this one
    /// and those in `excluded`; nil while there is none. Looks once: callers wait their own way
    /// (a test on the cooperative pool must not block a thread of it).
    public func connection(ofProcess pid: Int32, excluding excluded: Set<String> = []) -> String? {
        uniqueNames().first { !excluded.contains($0) && $0 != uniqueName && processID(of: $0) == pid }
    }

    private func uniqueNames() -> [String] {
        var reply: OpaquePointer?
        var error = sd_bus_error()
        defer {
            sd_bus_message_unref(reply)
            sd_bus_error_free(&error)
        }
        guard Self.callDriver(bus, "ListNames", &error, &reply), let reply,
              sd_bus_message_enter_container(reply, Self.type("a"), "s") > 0 else { return [] }
        var names: [String] = []
        var pointer: UnsafePointer<CChar>?
        while sd_bus_message_read_basic(reply, Self.type("s"), &pointer) > 0, let name = pointer {
            let text = String(cString: name)
            if text.hasPrefix(":") { names.append(text) }
        }
        return names
    }

    private func processID(of name: String) -> Int32? {
        var reply: OpaquePointer?
        var error = sd_bus_error()
        defer {
            sd_bus_message_unref(reply)
            sd_bus_error_free(&error)
        }
        var pid: UInt32 = 0
        guard Self.callDriver(bus, "GetConnectionUnixProcessID", &error, &reply, argument: name), let reply,
              sd_bus_message_read_basic(reply, Self.type("u"), &pid) > 0 else { return nil }
        return Int32(bitPattern: pid)
    }

    /// Calls a method of the bus driver with no argument or one string.
    private static func callDriver(_ bus: OpaquePointer, _ method: String, _ error: inout sd_bus_error, _ reply: inout OpaquePointer?,
                                   argument: String? = nil) -> Bool {
        var call: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &call, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", method) >= 0,
              let call else { return false }
        defer { sd_bus_message_unref(call) }
        if let argument {
            guard argument.withCString({ sd_bus_message_append_basic(call, type("s"), $0) }) >= 0 else { return false }
        }
        return sd_bus_call(bus, call, 0, &error, &reply) >= 0
    }

    private func signal(path: String, interface: String, member: String, to destination: String?,
                        _ fill: (OpaquePointer) -> Int32) throws {
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, interface, member) >= 0, let message else {
            throw PrivateBusError(description: "cannot create the signal \(member)")
        }
        defer { sd_bus_message_unref(message) }
        if let destination, sd_bus_message_set_destination(message, destination) < 0 {
            throw PrivateBusError(description: "cannot address \(member) to \(destination)")
        }
        guard fill(message) >= 0, sd_bus_send(bus, message, nil) >= 0, sd_bus_flush(bus) >= 0 else {
            throw PrivateBusError(description: "cannot send the signal \(member)")
        }
    }

    private static func type(_ code: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: code)) }

    deinit { sd_bus_flush_close_unref(bus) }
}
