import FoundationEssentials
import FoundationGaps

/// Which hosts count as this machine, where plain `http://` is acceptable: a project URL in the
/// configuration, a browser sign-in's `redirect_to`.
public enum LoopbackHost {
    /// True for `localhost`, `::1` and `127.0.0.0/8`, with or without IPv6 brackets, in any case.
    public static func contains(_ host: String) -> Bool {
        let bare = host.trimming { $0 == "[" || $0 == "]" }.lowercased()
        return bare == "localhost" || bare == "::1" || isLoopbackIPv4(bare)
    }

    /// A dotted quad in 127.0.0.0/8. Only the address itself: `127.0.0.1.example.com` is a name
    /// that DNS may send anywhere.
    private static func isLoopbackIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts.allSatisfy({ part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber) && Int(part).map { $0 <= 255 } == true
        }) else { return false }
        return parts[0] == "127"
    }
}
