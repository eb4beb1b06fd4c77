#if canImport(Glibc)
import Glibc
#endif

/// The user's home folder: what `NSHomeDirectory()` gave, without Foundation.
public enum HomeDirectory {
    /// `$HOME` when set and not empty, else the password database's entry for this user, else `/`.
    public static var current: String {
        if let home = getenv("HOME").map({ String(cString: $0) }), !home.isEmpty { return home }
        return fromPasswordDatabase() ?? "/"
    }

    /// The home folder the password database gives the user running this process, for when HOME
    /// is not set (a systemd unit or `env -i`); nil when it has none.
    public static func fromPasswordDatabase() -> String? {
        var size = max(sysconf(Int32(_SC_GETPW_R_SIZE_MAX)), 1024)
        while true {
            var entry = passwd()
            var found: UnsafeMutablePointer<passwd>?
            var buffer = [CChar](repeating: 0, count: size)
            let (status, home) = buffer.withUnsafeMutableBufferPointer { buffer -> (Int32, String?) in
                let status = getpwuid_r(getuid(), &entry, buffer.baseAddress!, buffer.count, &found)
                // pw_dir points into the buffer: read it while the buffer is there.
                guard status == 0, found != nil, let directory = entry.pw_dir else { return (status, nil) }
                return (status, String(cString: directory))
            }
            // The entry did not fit: try again with more room (within reason).
            if status == ERANGE, size < 1 << 20 {
                size *= 2
                continue
            }
            return home.flatMap { $0.isEmpty ? nil : $0 }
        }
    }
}
