import AsyncHTTPClient
import NIOCore
import NIOPosix
import Synchronization

/// One `HTTPClient` per proxy setting and trust, kept for the life of the process.
///
/// An `HTTPClient` must be shut down before it is released, and a `GoTrueClient` is a value
/// copied freely, so the clients live here instead, as `HTTPClient.shared` does, on SwiftNIO's
/// shared event loops (the daemon's socket server runs on the same ones). A process meets one
/// proxy setting and one trust, or two at most, so this never grows past a couple of entries.
enum SharedHTTPClients {
    private struct Key: Hashable {
        var proxy: ProxySettings
        var trust: TLSTrust
    }

    private static let clients = Mutex<[Key: HTTPClient]>([:])

    /// The client for requests through `proxy` to servers whose certificates `trust` vouches for.
    static func client(for proxy: ProxySettings, trust: TLSTrust) -> HTTPClient {
        clients.withLock { clients in
            let key = Key(proxy: proxy, trust: trust)
            if let client = clients[key] { return client }
            var configuration = HTTPClient.Configuration(tlsConfiguration: trust.clientConfiguration, redirectConfiguration: .disallow)
            configuration.decompression = .disabled
            // A refused or failed connection is reported at once, as an offline server, and the
            // session's own backoff decides when to try again; the pool's retries would instead
            // hide it until the request's deadline.
            configuration.connectionPool.retryConnectionEstablishment = false
            switch proxy {
            case .http(let host, let port, let username, let password):
                let authorization = username.map { HTTPClient.Authorization.basic(username: $0, password: password ?? "") }
                configuration.proxy = .server(host: host, port: port, authorization: authorization)
            case .socks(let host, let port):
                configuration.proxy = .socksServer(host: host, port: port)
            case .direct, .unsupported:
                break
            }
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }
}
