/// Paths as text: what `NSString`'s path methods did for the product, without Foundation.
extension StringProtocol {
    /// The folder part of a path: `/a/b/c` → `/a/b`, `/a` → `/`, `c` → `.` (trailing slashes
    /// ignored, as `NSString.deletingLastPathComponent` does).
    public var pathDirectory: String {
        var path = Substring(self)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    /// The last component of a path: `/a/b/c` → `c` (trailing slashes ignored).
    public var pathLastComponent: String {
        var path = Substring(self)
        while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/"), path.count > 1 else { return String(path) }
        return String(path[path.index(after: slash)...])
    }

    /// `component` appended with one slash between.
    public func appendingPathComponent(_ component: String) -> String {
        hasSuffix("/") ? String(self) + component : String(self) + "/" + component
    }
}
