@_exported import AuthSocket
import FoundationEssentials

// AuthSocket stays free of Foundation for authctl's front. Everything built on this module
// (the daemon, the client library, the whole authctl) gets the socket errors' texts through
// `localizedDescription` as well, wherever it meets them as `any Error`.

extension SocketPathError: LocalizedError {
    /// The same text as `description`.
    public var errorDescription: String? { description }
}

extension IPCError: LocalizedError {
    /// The same text as `description`.
    public var errorDescription: String? { description }
}
