import FoundationEssentials
import FoundationGaps
#if canImport(Glibc)
import Glibc
#endif

/// Whether a process really runs in a Flatpak or Snap sandbox, and as which app.
///
/// The cgroup scope's name is only a claim, which any program of the user can make. A Flatpak
/// sandbox is recognised by the `/.flatpak-info` that flatpak puts at the root of every sandbox
/// (read through `/proc/<pid>/root`, as xdg-desktop-portal does), and the app id is read from it;
/// a Snap by the AppArmor profile snapd confines the app with (`snap.<name>.…`), which the
/// process cannot choose. Without those marks the process is an ordinary program, named by its
/// executable.
enum SandboxIdentity {
    enum Kind: Equatable, Sendable { case flatpak, snap }

    /// Whether snapd's AppArmor profile confines the process whose `/proc` entry is `entry` as
    /// the snap `claim` (`snap.<name>`). Both files are the kernel's: reading them cannot block.
    static func snapConfirmed(entry: String, claim: String) -> Bool {
        let label = ClientIdentity.smallFile("\(entry)/attr/apparmor/current") ?? ClientIdentity.smallFile("\(entry)/attr/current") ?? ""
        let snap = claim.dropFirst("snap.".count)
        return label.hasPrefix("snap.\(snap).") && !label.contains("(unconfined)")
    }

    /// The app id in a `.flatpak-info` file: `name=` in its `[Application]` group (or, for a
    /// runtime sandbox, `[Runtime]`).
    static func flatpakAppID(fromInfo text: String) -> String? {
        var group = ""
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingWhitespace()
            if line.hasPrefix("[") { group = line; continue }
            guard group == "[Application]" || group == "[Runtime]", line.hasPrefix("name=") else { continue }
            let name = line.dropFirst("name=".count)
            let allowed = name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "_" || $0 == "-") }
            return allowed && !name.isEmpty && name.count <= 255 ? String(name) : nil
        }
        return nil
    }

    /// The sandbox a `/proc/<pid>/cgroup` text claims, and the app id it claims.
    static func claim(inCgroup text: String) -> (kind: Kind, id: String)? {
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
                    if !id.isEmpty { return (.flatpak, String(id)) }
                }
                if scope.hasPrefix("snap.") {
                    let parts = scope.split(separator: ".")
                    if parts.count >= 3, !parts[1].isEmpty { return (.snap, "snap.\(parts[1])") }
                }
            }
        }
        return nil
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
}
