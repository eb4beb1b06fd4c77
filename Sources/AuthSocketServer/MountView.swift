#if canImport(Glibc)
import Glibc
#endif

/// Which files a process sees: its mount namespace and its root directory.
///
/// A client's executable path is only a name when the client sees the same files as the user's
/// other programs: one in a mount namespace or root of its own can make any path lead to any file
/// (a bind mount, a chroot, a root of its own making), so a decision about `/usr/bin/python3` must
/// not cover whatever runs as `/usr/bin/python3` there. Such a client is named by a confirmed
/// sandbox (Flatpak, Snap) or not at all.
package struct MountView: Equatable, Sendable {
    /// The kernel's name of the mount namespace (`mnt:[4026531841]`).
    package let namespace: String
    /// The device and inode of the root directory.
    package let rootDevice: UInt64
    package let rootInode: UInt64

    /// A view from its parts.
    package init(namespace: String, rootDevice: UInt64, rootInode: UInt64) {
        self.namespace = namespace
        self.rootDevice = rootDevice
        self.rootInode = rootInode
    }

    /// The view of the process whose `/proc` entry is `entry`, or nil when the kernel refuses it.
    package static func of(entry: String) -> MountView? {
        guard let namespace = ClientIdentity.symbolicLinkTarget("\(entry)/ns/mnt") else { return nil }
        var root = stat()
        guard stat("\(entry)/root", &root) == 0 else { return nil }
        return MountView(namespace: namespace, rootDevice: UInt64(root.st_dev), rootInode: UInt64(root.st_ino))
    }

    /// The views that count as the user's: authd's own, and that of the process that started it.
    /// The installed unit runs authd in a mount namespace of its own (`ProtectSystem=`,
    /// `PrivateTmp=`) whose root is still the system's; the user's programs share the namespace of
    /// the systemd user manager, which started authd. Read once, at the first client, while the
    /// parent is still the process that started authd (or the subreaper that took it over).
    /// Empty when even authd's own cannot be read: then no client's path is a name.
    package static let users: [MountView] = {
        var views: [MountView] = []
        if let own = of(entry: "/proc/self") { views.append(own) }
        if let parent = of(entry: "/proc/\(getppid())"), !views.contains(parent) { views.append(parent) }
        return views
    }()

    /// Whether this view is one of the user's. The root must be the same directory and the
    /// namespace one of theirs: authd's own namespace differs from the user manager's only by
    /// its sandbox's read-only and private mounts, which hide files but lead no path elsewhere.
    package func isUsers(_ views: [MountView] = MountView.users) -> Bool {
        views.contains { $0.namespace == namespace } && views.contains { $0.rootDevice == rootDevice && $0.rootInode == rootInode }
    }
}
