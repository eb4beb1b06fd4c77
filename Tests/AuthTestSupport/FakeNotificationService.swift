import CSystemd
import Foundation
import Synchronization

/// Stands in for a desktop's notification server: owns `org.freedesktop.Notifications` on a
/// bus, records every notification it is asked to show, and answers each one as told, with the
/// same signals a real server sends when the user clicks a button or dismisses it.
public final class FakeNotificationService: Sendable {
    /// What the "user" does with each notification.
    public enum Reaction: Sendable, Equatable {
        /// Clicks the button with this action key.
        case invoke(String)
        /// Clicks the button with this action key before even answering `Notify` (the id comes
        /// later): D-Bus allows it, and the answer must still count.
        case invokeBeforeReplying(String)
        /// Dismisses it without choosing.
        case dismiss
        /// Leaves it on screen.
        case ignore
    }

    /// One notification as the server received it.
    public struct Shown: Sendable, Equatable {
        /// The id the server gave it.
        public let id: UInt32
        /// The unique bus name of the connection that asked for it.
        public let client: String
        /// The sending application's name.
        public let appName: String
        /// The title line.
        public let summary: String
        /// The text.
        public let body: String
        /// Action keys and labels, alternating, as sent.
        public let actions: [String]
    }

    private let core: Core
    private let finished = DispatchSemaphore(value: 0)

    /// Connects to the bus at `address`, takes the notification service's name and starts
    /// answering with `reaction`.
    public init(address: String, reaction: Reaction) throws {
        let bus = try PrivateBus.connect(address: address)
        let core = Core(bus: bus, reaction: reaction)
        let context = Unmanaged.passUnretained(core).toOpaque()
        guard sd_bus_add_filter(bus, nil, { message, context, _ in
            guard let message, let context else { return 0 }
            return Unmanaged<Core>.fromOpaque(context).takeUnretainedValue().handle(message)
        }, context) >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw PrivateBusError(description: "cannot add a filter")
        }
        let owned = sd_bus_request_name(bus, "org.freedesktop.Notifications", 0)
        guard owned >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw PrivateBusError(description: "cannot own org.freedesktop.Notifications: \(String(cString: strerror(-owned)))")
        }
        self.core = core
        let finished = self.finished
        Thread {
            core.serve()
            finished.signal()
        }.start()
    }

    /// Every notification shown so far, oldest first.
    public var shown: [Shown] { core.state.withLock { $0.shown } }

    /// The ids of the notifications the client withdrew (`CloseNotification`).
    public var withdrawn: [UInt32] { core.state.withLock { $0.withdrawn } }

    /// The "user" clicks the button `action` of notification `id` now (whatever the reaction),
    /// from the service's own connection, soon after the call.
    public func click(_ action: String, on id: UInt32) {
        core.state.withLock { $0.clicks.append((id, action)) }
    }

    /// Waits up to `seconds` for `condition` on this service; true when it held. The bound only
    /// ends a failing test: under the whole suite on two cores the task that asks may not get a
    /// thread for several seconds.
    ///
    /// Suspends between looks instead of sleeping the thread: the prompt under test runs on the
    /// same cooperative pool (two threads on a two-core machine), and a blocked thread there
    /// delayed it past the deadline under the whole suite.
    public func wait(seconds: Double = 60, until condition: (FakeNotificationService) -> Bool) async -> Bool {
        await eventually(within: seconds, every: .milliseconds(20)) { condition(self) }
    }

    /// Gives up the name and disconnects.
    public func stop() {
        guard core.state.withLock({ state in
            defer { state.stopping = true }
            return !state.stopping
        }) else { return }
        finished.wait()
    }

    deinit { stop() }

    /// The bus connection and what was seen; touched by the service thread only, except `state`.
    private final class Core: @unchecked Sendable {
        // Unchecked: `bus` is used on the service thread only; `state` is behind its lock.
        struct State {
            var reaction: Reaction
            var shown: [Shown] = []
            var withdrawn: [UInt32] = []
            var clicks: [(id: UInt32, action: String)] = []
            var stopping = false
        }

        let bus: OpaquePointer
        let state: Mutex<State>
        private var nextID: UInt32 = 1

        init(bus: OpaquePointer, reaction: Reaction) {
            self.bus = bus
            state = Mutex(State(reaction: reaction))
        }

        func serve() {
            while !state.withLock({ $0.stopping }) {
                while sd_bus_process(bus, nil) > 0 {}
                let clicks = state.withLock { state in
                    defer { state.clicks = [] }
                    return state.clicks
                }
                for click in clicks { invoke(click.action, on: click.id) }
                _ = sd_bus_flush(bus)
                _ = sd_bus_wait(bus, 50_000)
            }
            sd_bus_flush_close_unref(bus)
        }

        func handle(_ message: OpaquePointer) -> Int32 {
            let interface = "org.freedesktop.Notifications"
            if sd_bus_message_is_method_call(message, interface, "Notify") > 0 {
                notify(message)
                return 1
            }
            if sd_bus_message_is_method_call(message, interface, "CloseNotification") > 0 {
                var id: UInt32 = 0
                _ = sd_bus_message_read_basic(message, Self.type("u"), &id)
                state.withLock { $0.withdrawn.append(id) }
                reply(to: message) { _ in }
                closed(id, reason: 3)
                return 1
            }
            return 0
        }

        private func notify(_ message: OpaquePointer) {
            let appName = readString(message)
            var replaces: UInt32 = 0
            _ = sd_bus_message_read_basic(message, Self.type("u"), &replaces)
            _ = readString(message)
            let summary = readString(message), body = readString(message)
            var actions: [String] = []
            if sd_bus_message_enter_container(message, Self.type("a"), "s") > 0 {
                while sd_bus_message_at_end(message, 0) == 0 { actions.append(readString(message)) }
                _ = sd_bus_message_exit_container(message)
            }
            let id = nextID
            nextID += 1
            let client = sd_bus_message_get_sender(message).map { String(cString: $0) } ?? ""
            let reaction = state.withLock { state in
                state.shown.append(Shown(id: id, client: client, appName: appName, summary: summary, body: body, actions: actions))
                return state.reaction
            }
            if case .invokeBeforeReplying(let key) = reaction { invoke(key, on: id) }
            reply(to: message) { reply in
                var value = id
                _ = sd_bus_message_append_basic(reply, Self.type("u"), &value)
            }
            switch reaction {
            case .invoke(let key):
                invoke(key, on: id)
            case .dismiss:
                closed(id, reason: 2)
            case .ignore, .invokeBeforeReplying:
                break
            }
        }

        /// A click on a button, and the close that follows it.
        private func invoke(_ key: String, on id: UInt32) {
            signal("ActionInvoked") { signal in
                var value = id
                _ = sd_bus_message_append_basic(signal, Self.type("u"), &value)
                _ = key.withCString { sd_bus_message_append_basic(signal, Self.type("s"), $0) }
            }
            closed(id, reason: 2)
        }

        private func readString(_ message: OpaquePointer) -> String {
            var pointer: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, Self.type("s"), &pointer) > 0, let pointer else { return "" }
            return String(cString: pointer)
        }

        private func reply(to message: OpaquePointer, _ fill: (OpaquePointer) -> Void) {
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return }
            defer { sd_bus_message_unref(reply) }
            fill(reply)
            _ = sd_bus_send(bus, reply, nil)
        }

        private func closed(_ id: UInt32, reason: UInt32) {
            signal("NotificationClosed") { signal in
                var value = id, why = reason
                _ = sd_bus_message_append_basic(signal, Self.type("u"), &value)
                _ = sd_bus_message_append_basic(signal, Self.type("u"), &why)
            }
        }

        private func signal(_ name: String, _ fill: (OpaquePointer) -> Void) {
            var signal: OpaquePointer?
            guard sd_bus_message_new_signal(bus, &signal, "/org/freedesktop/Notifications", "org.freedesktop.Notifications", name) >= 0,
                  let signal else { return }
            defer { sd_bus_message_unref(signal) }
            fill(signal)
            _ = sd_bus_send(bus, signal, nil)
        }

        private static func type(_ code: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: code)) }
    }
}
