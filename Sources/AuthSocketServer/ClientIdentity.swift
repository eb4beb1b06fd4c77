import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Who a connected process is, from the kernel's view of it, never from anything it said:
/// the executable behind its pid (`SO_PEERCRED` → `/proc/<pid>/exe`) and, for a sandboxed app,
/// its Flatpak or Snap id from the cgroup its sandbox runs in.
public struct ClientIdentity: Sendable, Equatable, CustomStringConvertible {
    /// The executable path, or empty when it could not be read (the process already exited).
    public var executable: String
    /// The Flatpak app id (`org.gnome.Maps`) or Snap name (`snap.firefox`), when there is one.
    public var appID: String?

    /// Creates an identity.
    public init(executable: String, appID: String?) {
        self.executable = executable
        self.appID = appID
    }

    /// How decisions name the app: the sandbox's app id when it has one (its executable is
    /// the sandbox's view of a path, shared by many apps), else the executable.
    public var app: String { appID ?? (executable.isEmpty ? "(unknown executable)" : executable) }

    /// The app, for logs.
    public var description: String { app }

    /// Reads the identity of process `pid` from `/proc` (or another `procRoot`, for tests).
    ///
    /// This runs for every accepted connection, on the socket's event loop, so it reads with plain
    /// system calls (one `readlink`, one small `read`) rather than through FileManager.
    public static func of(pid: Int32, procRoot: String = "/proc") -> ClientIdentity {
        let executable = symbolicLinkTarget("\(procRoot)/\(pid)/exe") ?? ""
        let cgroup = smallFile("\(procRoot)/\(pid)/cgroup") ?? ""
        // A binary replaced while running shows as "path (deleted)"; the path is still the name.
        let path = executable.hasSuffix(" (deleted)") ? String(executable.dropLast(" (deleted)".count)) : executable
        return ClientIdentity(executable: path, appID: appID(fromCgroup: cgroup))
    }

    /// The target of symbolic link `path`, or nil when it cannot be read whole.
    private static func symbolicLinkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
        let count = readlink(path, &buffer, buffer.count)
        // A target that fills the buffer may have been cut short: unknown rather than wrong.
        guard count > 0, count < buffer.count else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `needle` occurs in `text`, by bytes: the generic collection search costs more
    /// than all the rest of accepting a connection.
    private static func mentions(_ needle: StaticString, in text: String) -> Bool {
        var text = text
        let length = needle.utf8CodeUnitCount
        let first = needle.utf8Start.pointee
        return text.withUTF8 { haystack in
            guard let base = haystack.baseAddress, haystack.count >= length else { return false }
            for start in 0...(haystack.count - length) where haystack[start] == first {
                if memcmp(base + start, needle.utf8Start, length) == 0 { return true }
            }
            return false
        }
    }

    /// The text of a small file (a `/proc` file of at most 64 KiB), or nil when it cannot be read.
    private static func smallFile(_ path: String) -> String? {
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

    /// The Flatpak or Snap app id in a `/proc/<pid>/cgroup` text, if any.
    ///
    /// Flatpak runs each app in a scope named `app-flatpak-<app id>-<number>.scope`; snapd in one
    /// named `snap.<snap>.<app>-<uuid>.scope` (or `snap.<snap>.<app>.<uuid>.scope`).
    public static func appID(fromCgroup text: String) -> String? {
        // Most clients are not sandboxed: two byte searches instead of splitting every line.
        guard mentions("app-flatpak-", in: text) || mentions("snap.", in: text) else { return nil }
        for line in text.split(separator: "\n") {
            guard let path = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).last else { continue }
            for component in path.split(separator: "/").reversed() where component.hasSuffix(".scope") {
                let scope = component.dropLast(".scope".count)
                if scope.hasPrefix("app-flatpak-") {
                    let rest = scope.dropFirst("app-flatpak-".count)
                    guard let dash = rest.lastIndex(of: "-"), rest[rest.index(after: dash)...].allSatisfy(\.isNumber) else { continue }
                    let id = rest[..<dash]
                    if !id.isEmpty { return String(id) }
                }
                if scope.hasPrefix("snap.") {
                    let parts = scope.split(separator: ".")
                    if parts.count >= 3, !parts[1].isEmpty { return "snap.\(parts[1])" }
                }
            }
        }
        return nil
    }
}
