import AuthCore
import Logging
import ServiceLifecycle

/// Hands every `WakeSignal` from its sources (logind, rtnetlink) to every profile's driver.
public struct WakeSignalRelay: Service, CustomStringConvertible {
    private let sources: [any WakeSignalSource]
    private let drivers: [SessionDriver]

    /// Creates a relay from `sources` to `drivers`.
    public init(sources: [any WakeSignalSource], drivers: [SessionDriver]) {
        self.sources = sources
        self.drivers = drivers
    }

    /// The name service-lifecycle logs.
    public var description: String { "WakeSignalRelay" }

    /// Relays until cancelled or asked to shut down gracefully.
    public func run() async {
        await cancelWhenGracefulShutdown {
            let (signals, sink) = AsyncStream.makeStream(of: WakeSignal.self, bufferingPolicy: .bufferingNewest(8))
            await withDiscardingTaskGroup { group in
                for source in sources {
                    group.addTask { await source.run { sink.yield($0) } }
                }
                for await signal in signals {
                    for driver in drivers { await driver.wake(signal) }
                }
                group.cancelAll()
            }
        }
    }
}
