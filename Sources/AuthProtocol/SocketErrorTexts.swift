import FoundationEssentials

// The socket errors' texts through `localizedDescription` as well, wherever the daemon, the
// client library or the whole authctl meets them as `any Error`.

extension SocketPathError: LocalizedError {
    /// The same text as `description`.
    public var errorDescription: String? { description }
}

extension IPCError: LocalizedError {
    /// The same text as `description`.
    public var errorDescription: String? { description }
}
