import Foundation

/// Which hosts count as this machine, where plain `http://` is acceptable: a project URL in the
/// configuration, a browser sign-in's `redirect_to`.
public enum LoopbackHost {
    /// True for `localhost`, `::1` and `127.0.0.0/8`, with or without IPv6 brackets, in any case.
    public static func contains(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }
}
