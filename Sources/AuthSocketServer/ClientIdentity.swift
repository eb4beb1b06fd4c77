import Foundation

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
    public static func of(pid: Int32, procRoot: String = "/proc") -> ClientIdentity {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(procRoot)/\(pid)/exe")) ?? ""
        let cgroup = (try? String(contentsOfFile: "\(procRoot)/\(pid)/cgroup", encoding: .utf8)) ?? ""
        // A binary replaced while running shows as "path (deleted)"; the path is still the name.
        let path = executable.hasSuffix(" (deleted)") ? String(executable.dropLast(" (deleted)".count)) : executable
        return ClientIdentity(executable: path, appID: appID(fromCgroup: cgroup))
    }

    /// The Flatpak or Snap app id in a `/proc/<pid>/cgroup` text, if any.
    ///
    /// Flatpak runs each app in a scope named `app-flatpak-<app id>-<number>.scope`; snapd in one
    /// named `snap.<snap>.<app>-<uuid>.scope` (or `snap.<snap>.<app>.<uuid>.scope`).
    public static func appID(fromCgroup text: String) -> String? {
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
