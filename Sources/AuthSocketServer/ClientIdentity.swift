import Foundation
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

    /// Reads the identity of process `pid` from `/proc` (or another `procRoot`, for tests).
    ///
    /// With `pidfd` (from `SO_PEERPIDFD`, Linux 6.5 and newer) the reads are checked to belong to
    /// the process that connected: once they are done, the pidfd must still name a live process
    /// with this pid. A process that exited meanwhile, whose pid may already be another
    /// program's, is unidentified instead of mistaken for that program.
    ///
    /// This runs for every accepted connection, on the socket's event loop, so it reads with plain
    /// system calls (one `readlink`, one small `read`) rather than through FileManager; the
    /// sandbox's own files are read only for a process whose cgroup names a sandbox.
    public static func of(pid: Int32, pidfd: Int32? = nil, procRoot: String = "/proc") -> ClientIdentity {
        let entry = "\(procRoot)/\(pid)"
        guard let target = symbolicLinkTarget("\(entry)/exe") else {
            let reason = errno == ENOENT || errno == ESRCH ? "the program exited before authd could tell which it was"
                : "authd may not read /proc/\(pid)/exe (\(String(cString: strerror(errno))))"
            return ClientIdentity(unidentified: reason)
        }
        // A binary replaced while running shows as "path (deleted)"; the path is still the name.
        let executable = target.hasSuffix(" (deleted)") ? String(target.dropLast(" (deleted)".count)) : target
        let appID = SandboxIdentity.appID(entry: entry, cgroup: smallFile("\(entry)/cgroup") ?? "")
        if let pidfd, !stillRuns(pid: pid, pidfd: pidfd) {
            return ClientIdentity(unidentified: "the program exited before authd could tell which it was")
        }
        return ClientIdentity(executable: executable, appID: appID)
    }

    /// Whether `pidfd` still names a live process whose pid is `pid` (its `/proc/self/fdinfo`
    /// entry says `Pid:` and the number, or -1 once the process is gone).
    package static func stillRuns(pid: Int32, pidfd: Int32) -> Bool {
        guard let info = smallFile("/proc/self/fdinfo/\(pidfd)") else { return false }
        for line in info.split(separator: "\n") where line.hasPrefix("Pid:") {
            return Int32(line.dropFirst("Pid:".count).trimmingCharacters(in: .whitespaces)) == pid
        }
        return false
    }

    /// The target of symbolic link `path`, or nil (with `errno` set) when it cannot be read whole.
    private static func symbolicLinkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let count = readlink(path, &buffer, buffer.count)
        // A target that fills the buffer may have been cut short: unknown rather than wrong.
        guard count > 0, count < buffer.count else {
            if count >= 0 { errno = ENAMETOOLONG }
            return nil
        }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The text of a small file (a `/proc` file of at most 64 KiB), or nil when it cannot be read.
    static func smallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
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
