/// The HTTP server of one sign-in page, as the page's owner sees it: the port it listens on at
/// 127.0.0.1, the loop that answers its requests, and its end. The port by which the daemon
/// serves pages: `SignInPageHTTPServer` in the program, a fake or the real one in tests.
public protocol SignInPageListener: Sendable {
    /// The port it listens on, at 127.0.0.1.
    var port: UInt16 { get }
    /// Answers each request with `respond` until `close()` or cancellation; returns once every
    /// connection has ended.
    func serve(_ respond: @escaping @Sendable (SignInPageHTTPRequest) async -> SignInPageHTTPResponse) async throws
    /// Stops listening: `serve` returns once the connections still open have ended.
    func close()
}

/// Starts a new server for each sign-in page.
public protocol SignInPageListening: Sendable {
    /// A server listening on 127.0.0.1 at a free port, not yet serving.
    func listen() async throws -> any SignInPageListener
}
