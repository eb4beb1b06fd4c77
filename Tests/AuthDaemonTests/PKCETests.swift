@testable import AuthDaemon
import Testing

/// The random values of sign-ins.
@Suite struct PKCETests {
    /// A nonce is typed on command lines (`authctl login --nonce RAW`): one starting with `-`
    /// read as an option and failed one sign-in in about 66 (a CI run). Flow ids travel in URLs.
    @Test func noncesAndFlowIDsAreLettersAndDigitsOnly() {
        for _ in 0..<2000 {
            let nonce = PKCE.makeNonce().raw
            #expect(nonce.count == 43 && nonce.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "\(nonce)")
            let flow = PKCE.makeFlowID()
            #expect(flow.count == 16 && flow.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "\(flow)")
        }
        let verifier = PKCE.makeVerifier()
        #expect(verifier.count == 64 && verifier.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~".contains($0)) })
    }
}
