import CAuthdPeer
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Who a connected process is, from the kernel's view of it, never from anything it said:
/// the executable behind its pid (`SO_PEERCRED` → `/proc/<pid>/exe`) and, for an app that really
/// runs in a Flatpak or Snap sandbox, its app id.
///
/// A client whose executable cannot be read (it exited, or the kernel refused the read) is
/// *unidentified*: it never shares a name with another client, so no decision about one app can
/// ever cover it.
public struct ClientIdentity: Sendable, Equatable, CustomStringConvertible {
    /// The executable path, or empty when it could not be read.
    public var executable: String
    /// The Flatpak app id (`org.gnome.Maps`) or Snap name (`snap.firefox`), when the process
    /// runs in that sandbox.
    public var appID: String?
    /// Why the client could not be identified; nil when it was.
    public var unidentified: String?

    /// Creates an identity.
    public init(executable: String, appID: String?) {
        self.executable = executable
        self.appID = appID
        self.unidentified = executable.isEmpty ? "no executable" : nil
    }

    /// An identity that could not be read, and why.
    public init(unidentified reason: String) {
        self.executable = ""
        self.appID = nil
        self.unidentified = reason
    }

    /// Whether authd knows which program this is.
    public var isIdentified: Bool { unidentified == nil }

    /// How decisions name the app: the sandbox's app id when it has one (its executable is
    /// the sandbox's view of a path, shared by many apps), else the executable. An unidentified
    /// client has a name for logs only, which no decision can match.
    public var app: String { appID ?? (isIdentified ? executable : "(unidentified client: \(unidentified ?? ""))") }

    /// The app, for logs.
    public var description: String { app }

    /// Whose share of the per-client limits this client uses: its app name, or one share for all
    /// the clients that could not be identified.
    public var quotaKey: String { isIdentified ? app : "(unidentified)" }

    /// Reads the identity of process `pid` from `/proc` (or another `procRoot`, for tests): the
    /// two steps of `Reading` at once. The second may block (see there), so the socket server
    /// takes them apart.
    public static func of(pid: Int32, pidfd: Int32? = nil, procRoot: String = "/proc") -> ClientIdentity {
        let reading = Reading(pid: pid, procRoot: procRoot)
        return reading.finished(pidfd: pidfd, sandboxFiles: reading.needsSandboxFiles ? reading.readSandboxFiles() : nil)
    }

    /// A client's identity in two steps. The first (`init`) reads only the kernel's own files
    /// (`/proc/<pid>/exe`, `cgroup`) and never blocks: it runs on the socket's event loop for
    /// every connection. A process whose cgroup claims a Flatpak sandbox then needs a file read
    /// inside its own root (`/.flatpak-info`), which the process controls: a FIFO or a FUSE file
    /// there could block the reader forever, so that read (`readSandboxFiles`) runs off the
    /// event loop, with a time limit. `finished` puts the parts together.
    package struct Reading: Sendable {
        let pid: Int32
        let entry: String
        /// The executable path, or why it could not be read.
        let executable: Result<String, Unidentified>
        /// Whether the file at that path here is the file the process runs.
        let pathNamesTheProgram: Bool
        /// The sandbox the cgroup claims, if any.
        let claim: (kind: SandboxIdentity.Kind, id: String)?
        /// Which files the process sees, or nil when the kernel refused to say.
        let mountView: MountView?

        struct Unidentified: Error { let reason: String }

        /// The first step. Nothing here waits on a program: the kernel's own files, and a path
        /// looked up only in the user's view (see `sameFile` for what a program of the user can
        /// still make it wait on).
        package init(pid: Int32, procRoot: String = "/proc") {
            self.pid = pid
            entry = "\(procRoot)/\(pid)"
            let view = MountView.of(entry: entry)
            mountView = view
            if let target = ClientIdentity.symbolicLinkTarget("\(entry)/exe") {
                // A binary replaced while running shows as "path (deleted)".
                let path = target.hasSuffix(" (deleted)") ? String(target.dropLast(" (deleted)".count)) : target
                executable = .success(path)
                // A program that sees other files is no program of the user's by its path, and the
                // path is not looked up: it could lead through the program's own mounts.
                pathNamesTheProgram = view?.isUsers() == true && ClientIdentity.sameFile("\(entry)/exe", path)
            } else {
                let reason = errno == ENOENT || errno == ESRCH ? "the program exited before authd could tell which it was"
                    : "authd may not read /proc/\(pid)/exe (\(String(cString: strerror(errno))))"
                executable = .failure(Unidentified(reason: reason))
                pathNamesTheProgram = false
            }
            claim = SandboxIdentity.claim(inCgroup: ClientIdentity.smallFile("\(entry)/cgroup") ?? "")
        }

        /// Whether `readSandboxFiles` must run before `finished`.
        package var needsSandboxFiles: Bool {
            if case .success = executable, claim?.kind == .flatpak { return true }
            return false
        }

        /// The second step, which may block: the Flatpak app id from the sandbox's own
        /// `/.flatpak-info`, or nil when there is none (then the claim counts for nothing).
        package func readSandboxFiles() -> String? {
            guard let info = ClientIdentity.smallFile("\(entry)/root/.flatpak-info", untrusted: true) else { return nil }
            return SandboxIdentity.flatpakAppID(fromInfo: info)
        }

        /// The identity, given what `readSandboxFiles` found (nil when it was not needed, failed
        /// or took too long). With `pidfd`, the reads are checked to belong to the process that
        /// connected: the pidfd must still name a live process with this pid afterwards, or a
        /// client that exited (its pid free for another program) is unidentified.
        /// `users` are the views of the user's own programs (`MountView.users`; tests give theirs).
        package func finished(pidfd: Int32?, sandboxFiles flatpakAppID: String?, users: [MountView] = MountView.users) -> ClientIdentity {
            let path: String
            switch executable {
            case .failure(let unidentified): return ClientIdentity(unidentified: unidentified.reason)
            case .success(let found): path = found
            }
            var appID: String?
            switch claim?.kind {
            case .flatpak?: appID = flatpakAppID
            case .snap?: appID = SandboxIdentity.snapConfirmed(entry: entry, claim: claim!.id) ? claim!.id : nil
            case nil: appID = nil
            }
            if let pidfd, !ClientIdentity.stillRuns(pidfd: pidfd) {
                return ClientIdentity(unidentified: "the program exited before authd could tell which it was")
            }
            // A sandboxed app is named by its app id; its path is the sandbox's view. Anyone else
            // must see the user's files (a Flatpak started without its scope, a chroot or a root
            // of its own making is none of the user's programs, whatever its path says), and be
            // named by a path that leads, here, to the very file it runs: a program can make any
            // path show in its /proc/<pid>/exe by bind-mounting itself there in a mount namespace
            // of its own, or be a binary replaced on disk since it started.
            guard appID != nil || mountView?.isUsers(users) == true else {
                return ClientIdentity(unidentified: "\(path) runs in a mount namespace or root of its own and is no Flatpak or Snap authd can confirm; run it outside that sandbox")
            }
            guard appID != nil || pathNamesTheProgram else {
                return ClientIdentity(unidentified: "\(path) is not the file this program runs (replaced since it started, or seen through a mount namespace of its own); restart it")
            }
            return ClientIdentity(executable: path, appID: appID)
        }
    }

    /// Whether `a` and `b` lead to the same file (device and inode), both followed, from the
    /// kernel's cached attributes, so that a FUSE server that never answers is not asked for
    /// them. Looking the path up can still ask one (a lookup whose cache ran out): a program of
    /// the user that serves its own FUSE mount and stops answering can hold the event loop. It
    /// could as well end authd with a signal; a sandboxed app, which can do neither, is never
    /// looked up by path.
    static func sameFile(_ a: String, _ b: String) -> Bool {
        var first: (device: UInt64, inode: UInt64, mount: UInt64) = (0, 0, 0), second = first
        guard authd_file_identity(a, &first.device, &first.inode, &first.mount) == 0,
              authd_file_identity(b, &second.device, &second.inode, &second.mount) == 0 else { return false }
        return first.device == second.device && first.inode == second.inode
    }

    /// Whether the process `pidfd` refers to still runs. The pidfd came with the connection
    /// (`SO_PEERPIDFD`), so while that process runs its pid names nobody else: what was read
    /// under the pid before this check was read from it. One system call (a signal 0).
    package static func stillRuns(pidfd: Int32) -> Bool {
        authd_pidfd_alive(pidfd) == 1
    }

    /// The target of symbolic link `path`, or nil (with `errno` set) when it cannot be read whole.
    static func symbolicLinkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let count = readlink(path, &buffer, buffer.count)
        // A target that fills the buffer may have been cut short: unknown rather than wrong.
        guard count > 0, count < buffer.count else {
            if count >= 0 { errno = ENAMETOOLONG }
            return nil
        }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The text of a small file (at most 64 KiB), or nil when it cannot be read. An `untrusted`
    /// file (one inside a client's own root) is opened without following a last symbolic link or
    /// waiting for a FIFO's writer, and read only if it is a regular file.
    static func smallFile(_ path: String, untrusted: Bool = false) -> String? {
        let flags = O_RDONLY | O_CLOEXEC | (untrusted ? O_NONBLOCK | O_NOFOLLOW | O_NOCTTY : 0)
        let fd = open(path, flags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if untrusted {
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The Flatpak or Snap app id a `/proc/<pid>/cgroup` text claims, if any. A claim only: any
    /// program of the user can start itself in a scope of that name (`systemd-run --user
    /// --scope --unit=app-flatpak-…`), so `of(pid:)` believes it only when the sandbox's own
    /// marks are there too (`SandboxIdentity`).
    ///
    /// Flatpak runs each app in a scope named `app-flatpak-<app id>-<number>.scope`; snapd in one
    /// named `snap.<snap>.<app>-<uuid>.scope` (or `snap.<snap>.<app>.<uuid>.scope`).
    public static func appID(fromCgroup text: String) -> String? {
        SandboxIdentity.claim(inCgroup: text)?.id
    }
}
