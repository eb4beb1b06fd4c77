import AuthCore
import AuthProtocol
import Testing

/// The wire's lists of allowed values (AuthProtocol, which cannot see AuthCore) name the same
/// cases, in the same order, as the core's enums the daemon turns them into.
@Suite struct ParameterListsTests {
    @Test func theWireAllowsExactlyTheCoreCases() {
        #expect(Methods.SignOut.Parameters.scopes == SignOutScope.allCases.map(\.rawValue))
        #expect(Methods.VerifyCode.Parameters.types == OTPType.allCases.map(\.rawValue))
        #expect(Methods.Resend.Parameters.types == ResendRequest.Purpose.allCases.map(\.rawValue))
        #expect(Methods.EnrollFactor.Parameters.factorTypes == FactorKind.allCases.map(\.rawValue))
    }
}
