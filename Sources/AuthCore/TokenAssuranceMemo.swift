/// The assurance claims (`aal`, `amr`) of the token served, decoded once per token: every status
/// answer and every event states them, and a token changes only when the session does.
public struct TokenAssuranceMemo: Sendable {
    private var last: (accessToken: String, assurance: TokenAssurance?)?
    private let decode: @Sendable (String) -> TokenAssurance?

    /// A memo that reads claims with `decode` (tests count its calls).
    public init(decode: @escaping @Sendable (String) -> TokenAssurance? = { TokenAssurance(accessToken: $0) }) {
        self.decode = decode
    }

    /// The claims of `accessToken`, decoded only when it differs from the last one asked about.
    public mutating func assurance(of accessToken: String) -> TokenAssurance? {
        if let last, last.accessToken == accessToken { return last.assurance }
        let assurance = decode(accessToken)
        last = (accessToken, assurance)
        return assurance
    }
}
