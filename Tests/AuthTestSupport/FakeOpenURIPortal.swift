import CSystemd
import Foundation
import Synchronization

/// Stands in for the desktop portal's OpenURI (`org.freedesktop.portal.Desktop`): owns the name
/// on a bus, records every address it is asked to open, and answers as the portal does, with the
/// request's handle.
public final class FakeOpenURIPortal: Sendable {
    private let core: Core
    private let finished = DispatchSemaphore(value: 0)

    /// Connects to the bus at `address` and takes the portal's name.
    public init(address: String) throws {
        let bus = try PrivateBus.connect(address: address)
        let core = Core(bus: bus)
        let context = Unmanaged.passUnretained(core).toOpaque()
        guard sd_bus_add_filter(bus, nil, { message, context, _ in
            guard let message, let context else { return 0 }
            return Unmanaged<Core>.fromOpaque(context).takeUnretainedValue().handle(message)
        }, context) >= 0, sd_bus_request_name(bus, "org.freedesktop.portal.Desktop", 0) >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw PrivateBusError(description: "cannot own org.freedesktop.portal.Desktop")
        }
        self.core = core
        let finished = self.finished
        Thread {
            core.serve()
            finished.signal()
        }.start()
    }

    /// The addresses asked for, oldest first.
    public var opened: [String] { core.state.withLock { $0.opened } }

    /// Gives up the name and disconnects.
    public func stop() {
        guard core.state.withLock({ state in
            defer { state.stopping = true }
            return !state.stopping
        }) else { return }
        finished.wait()
    }

    deinit { stop() }

    /// The bus connection, used on the service thread only, and what was asked, behind its lock.
    private final class Core: @unchecked Sendable {
        struct State {
            var opened: [String] = []
            var stopping = false
        }

        let bus: OpaquePointer
        let state = Mutex(State())

        init(bus: OpaquePointer) { self.bus = bus }

        func serve() {
            while !state.withLock({ $0.stopping }) {
                while sd_bus_process(bus, nil) > 0 {}
                _ = sd_bus_flush(bus)
                _ = sd_bus_wait(bus, 50_000)
            }
            sd_bus_flush_close_unref(bus)
        }

        func handle(_ message: OpaquePointer) -> Int32 {
            guard sd_bus_message_is_method_call(message, "org.freedesktop.portal.OpenURI", "OpenURI") > 0 else { return 0 }
            var parent: UnsafePointer<CChar>?, uri: UnsafePointer<CChar>?
            _ = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &parent)
            guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &uri) > 0, let uri else { return 0 }
            let address = String(cString: uri)
            state.withLock { $0.opened.append(address) }
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return 1 }
            defer { sd_bus_message_unref(reply) }
            _ = "/org/freedesktop/portal/desktop/request/1_1/authd".withCString { sd_bus_message_append_basic(reply, CChar(UInt8(ascii: "o")), $0) }
            _ = sd_bus_send(bus, reply, nil)
            return 1
        }
    }
}
