import AuthCore
import Foundation
import Testing

/// An MFA verification's token validity and what a failed try means, without a driver.
@Suite struct VerificationRulesTests {
    @Test func theTokenLastsHalfAShortLifetimeAndAtMostFiveMinutes() {
        #expect(VerificationRules.tokenValidity(hold: .none, lifetime: 3600) == 300)
        #expect(VerificationRules.tokenValidity(hold: .none, lifetime: 240) == 120)
        // Never below what any server call needs, and no lifetime known asks for just that.
        #expect(VerificationRules.tokenValidity(hold: .none, lifetime: 10) == ServerCallToken.minimumValidity)
        #expect(VerificationRules.tokenValidity(hold: .none, lifetime: nil) == ServerCallToken.minimumValidity)
        // While refreshes are held back no fresher token can come: ask only what the call needs.
        #expect(VerificationRules.tokenValidity(hold: .uncertain(until: Date(timeIntervalSince1970: 100)), lifetime: 3600) == ServerCallToken.minimumValidity)
    }

    @Test func anUnknownOutcomeIsTriedAgainAndOnlyAChallengeCheckRefusalSpeaksForTheFirstTry() {
        let lost = ServerFailure.unreachable(url: "https://x.test", detail: "connection reset")
        #expect(VerificationRules.afterFailure(lost, attempt: 0) == .tryAgain)
        #expect(VerificationRules.afterFailure(lost, attempt: 1) == .tryAgain)
        let wrongCode = ServerFailure.http(status: 422, code: "mfa_verification_failed", message: "Invalid TOTP code entered", retryAfter: nil)
        #expect(VerificationRules.afterFailure(wrongCode, attempt: 0) == .fail(endsSession: false))
        #expect(VerificationRules.afterFailure(wrongCode, attempt: 1) == .fail(endsSession: false))
        // A rate limit on the second try says nothing of whether the first verified.
        let limited = ServerFailure.http(status: 429, code: "over_request_rate_limit", message: "slow down", retryAfter: nil)
        #expect(VerificationRules.afterFailure(limited, attempt: 0) == .fail(endsSession: false))
        #expect(VerificationRules.afterFailure(limited, attempt: 1) == .tryAgain)
        // The project's hook refused it: GoTrue signed the user's sessions out.
        let rejected = ServerFailure.http(status: 403, code: "mfa_verification_rejected", message: "rejected", retryAfter: nil)
        #expect(VerificationRules.afterFailure(rejected, attempt: 0) == .fail(endsSession: true))
    }
}
