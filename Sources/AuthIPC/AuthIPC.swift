@_exported import AuthSocket
import Foundation

// AuthSocket stays free of Foundation for authctl's front; clients that do use Foundation get
// its errors' texts through `localizedDescription` as well, wherever they meet them as `any Error`.

extension SocketPathError: LocalizedError {
    /// The same text as `description`.
    public var errorDescription: String? { description }
}

extension IPCError: LocalizedError {
    /// The same text as `description`.
    public var errorDescription: String? { description }
}
