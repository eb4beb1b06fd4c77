import FoundationEssentials

/// The credentials the kernel reports for a connected peer (`SO_PEERCRED`).
///
/// Laid out exactly like `struct ucred` (pid, uid, gid), which Glibc only declares under
/// `_GNU_SOURCE`; a shim with that define breaks the build against Dispatch.
public struct PeerCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The peer's process id at connect time.
    public var pid: Int32
    /// The peer's effective user id.
    public var uid: UInt32
    /// The peer's effective group id.
    public var gid: UInt32

    /// Creates credentials.
    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// `pid=… uid=…` for logs.
    public var description: String { "pid=\(pid) uid=\(uid)" }
}
