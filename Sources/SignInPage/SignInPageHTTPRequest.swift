/// One HTTP request to the sign-in page's server, as the server read it: what
/// `SignInPageGate` decides on. The server has already bounded its size.
///
/// Its target may hold a secret (the opening link's, the return path's and a provider's code),
/// its `Cookie` the page's cookie and its body a password: the description and the mirror show
/// the method, the first part of the path and the header fields' names only.
public struct SignInPageHTTPRequest: Sendable, CustomStringConvertible, CustomReflectable {
    /// The method, as sent (`GET`, `POST`).
    public var method: String
    /// The request target: the path and, after a `?`, the query.
    public var target: String
    /// The header fields in the order they came, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body (a posted form), empty for a GET.
    public var body: [UInt8]

    /// A request of `method` for `target`.
    public init(method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
    }

    /// The target's path, without the query.
    public var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }

    /// The target's query, after the `?`; empty when there is none.
    public var query: Substring {
        guard let mark = target.firstIndex(of: "?") else { return "" }
        return target[target.index(after: mark)...]
    }

    /// The values of every header field called `name` (compared without regard to case).
    public func values(of name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The value of the header field `name` when it was sent exactly once; nil when it was not
    /// sent, or sent twice (a request that repeats a field the gate reads is not trusted).
    public func single(_ name: String) -> String? {
        let values = values(of: name)
        return values.count == 1 ? values[0] : nil
    }

    /// The method, the path's first part (`/sign-in`, `/open`), the header names and the body's
    /// length; never a value.
    public var description: String {
        let first = path.split(separator: "/", maxSplits: 1).first.map { "/" + $0 } ?? "/"
        return "SignInPageHTTPRequest(\(method.prefix(16)) \(first.prefix(32))…, headers: \(headers.map(\.name).joined(separator: ", ")), body: \(body.count) bytes)"
    }

    /// Only what `description` shows, so that `dump` shows no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["request": description]) }

    /// The value of the cookie `name` in the request's `Cookie` fields: every one of that name,
    /// because browsers do not keep cookies apart by port and another server on 127.0.0.1 may
    /// have set one of the same name.
    public func cookies(named name: String) -> [Substring] {
        values(of: "Cookie").flatMap { $0.split(separator: ";") }.compactMap { pair in
            let pair = pair.drop { $0 == " " || $0 == "\t" }
            guard let equals = pair.firstIndex(of: "="), pair[..<equals] == name else { return nil }
            return pair[pair.index(after: equals)...]
        }
    }
}
