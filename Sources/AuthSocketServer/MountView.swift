import CAuthdPeer
#if canImport(Glibc)
import Glibc
#endif

/// Which files a process sees: its mount namespace and its root directory.
///
/// A client's executable path is only a name when the client sees the same files as the user's
/// other programs: one in a mount namespace or root of its own can make any path lead to any file
/// (a bind mount, a chroot, a root of its own making, another namespace's root borrowed through
/// `/proc/<pid>/root`), so a decision about `/usr/bin/python3` must not cover whatever runs as
/// `/usr/bin/python3` there. Such a client is named by a confirmed sandbox (Flatpak, Snap) or not
/// at all.
package struct MountView: Equatable, Sendable {
    /// The kernel's name of the mount namespace (`mnt:[4026531841]`).
    package let namespace: String
    /// The root directory: its device and inode, and the mount it is on (the kernel's mount id;
    /// 0 before Linux 5.8). The mount tells the user's root from another namespace's mount of the
    /// same directory, which a chroot into `/proc/<pid>/root` of that namespace would give.
    package let rootDevice: UInt64
    package let rootInode: UInt64
    package let rootMount: UInt64

    /// A view from its parts.
    package init(namespace: String, rootDevice: UInt64, rootInode: UInt64, rootMount: UInt64 = 0) {
        self.namespace = namespace
        self.rootDevice = rootDevice
        self.rootInode = rootInode
        self.rootMount = rootMount
    }

    /// The view of the process whose `/proc` entry is `entry`, or nil when the kernel refuses it.
    /// The root is looked at from the kernel's cached attributes (`authd_file_identity`): a
    /// root on a FUSE file system whose server never answers cannot block the event loop.
    package static func of(entry: String) -> MountView? {
        guard let namespace = ClientIdentity.symbolicLinkTarget("\(entry)/ns/mnt") else { return nil }
        var device: UInt64 = 0, inode: UInt64 = 0, mount: UInt64 = 0
        guard authd_file_identity("\(entry)/root", &device, &inode, &mount) == 0 else { return nil }
        return MountView(namespace: namespace, rootDevice: device, rootInode: inode, rootMount: mount)
    }

    /// The views that count as the user's (`users(own:starter:)`), read once, when the socket
    /// server starts: then authd's parent is still the process that started it (the systemd user
    /// manager, a shell), or the subreaper that took it over.
    package static let users: [MountView] = users(own: of(entry: "/proc/self"), starter: of(entry: "/proc/\(getppid())"))

    /// The user's views: authd's own and its starter's. The installed unit may run authd in a
    /// mount namespace of its own (`ProtectSystem=`, `PrivateTmp=`), whose root is a new mount of
    /// the same directory; the user's programs share the namespace and root of the user manager,
    /// which started authd. Empty when even authd's own cannot be read: then no client's path is
    /// a name.
    package static func users(own: MountView?, starter: MountView?) -> [MountView] {
        guard let own else { return [] }
        guard let starter, starter != own else { return [own] }
        return [own, starter]
    }

    /// Whether this view is one of `views`: the same namespace and the same root, on the same
    /// mount, as one of them.
    package func isUsers(_ views: [MountView] = MountView.users) -> Bool {
        views.contains(self)
    }

    /// The view for logs.
    package var summary: String { "\(namespace) root \(rootDevice):\(rootInode) on mount \(rootMount)" }
}
