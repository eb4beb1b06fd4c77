import AuthCore
import AuthTestSupport
import Foundation
import Testing

/// What the sign-in page's tests share: settings, a flow driven step by step with the time
/// given (seconds after `t0`), and the outcomes a driver reports.
enum Page {
    static let t0 = Fixtures.t0

    /// Every method on: email (not auto-confirmed), phone, sign-ups, SSO, anonymous, two providers.
    static let everything = ProjectSettings(emailEnabled: true, phoneEnabled: true, signUpDisabled: false, emailAutoconfirm: false,
                                            phoneAutoconfirm: false, singleSignOnEnabled: true, anonymousSignInsEnabled: true,
                                            oauthProviders: ["github", "google"])

    static let totp = FactorSummary(id: "11111111-1111-4111-8111-111111111111", type: "totp", friendlyName: "phone app")
    static let sms = FactorSummary(id: "22222222-2222-4222-8222-222222222222", type: "phone")
    static let passkey = FactorSummary(id: "33333333-3333-4333-8333-333333333333", type: "webauthn")

    static func account(_ email: String = "ada@example.com", factors: [FactorSummary] = [], level: AssuranceLevel = .aal1) -> SignInPageAccount {
        SignInPageAccount(email: email, verifiedFactors: factors, level: level)
    }

    static func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    static func flow(_ settings: ProjectSettings = everything, options: SignInPageFlow.Options = .init()) -> SignInPageFlow {
        SignInPageFlow(startedAt: t0, settings: settings, options: options)
    }

    /// GoTrue's refusal `code` (HTTP `status`), as the driver reports it.
    static func refusal(_ code: String, status: Int = 400, message: String = "refused", retryAfter: TimeInterval? = nil) -> SignInPageOutcome {
        .failed(.server(.http(status: status, code: code, message: message, retryAfter: retryAfter)))
    }

    /// GoTrue's words for a code asked for again too soon (its 429 has no Retry-After).
    static func tooSoon(_ seconds: Int) -> String {
        "For security purposes, you can only request this after \(seconds) seconds."
    }

    static let unreachable = SignInPageOutcome.failed(.server(.notSent(url: "https://p.supabase.co/auth/v1", detail: "connection refused")))
}

/// Something a test expected and did not get.
struct Unexpected: Error, CustomStringConvertible {
    var description: String
}

extension SignInPageFlow {
    /// Posts `action` at `seconds` and returns the operation it hands out; throws when it hands
    /// out none.
    mutating func post(_ action: SignInPageAction, at seconds: TimeInterval = 1) throws -> SignInPageRequest {
        try Self.request(handle(action, now: Page.at(seconds)), after: action)
    }

    /// Posts `action` at `seconds`, which must hand out nothing.
    @discardableResult
    mutating func show(_ action: SignInPageAction, at seconds: TimeInterval = 1) -> SignInPageTransition {
        handle(action, now: Page.at(seconds))
    }

    /// Reports `outcome` for `request` at `seconds`; the operation that follows, if any.
    @discardableResult
    mutating func report(_ outcome: SignInPageOutcome, for request: SignInPageRequest, at seconds: TimeInterval = 2) throws -> SignInPageRequest? {
        let transition = complete(request.ticket, with: outcome, now: Page.at(seconds))
        guard case .next(let next) = transition else { throw Unexpected(description: "\(outcome) for \(request) was \(transition)") }
        return next
    }

    /// The operation that must follow `transition`.
    static func request(_ transition: SignInPageTransition, after action: Any) throws -> SignInPageRequest {
        guard case .next(let request?) = transition else { throw Unexpected(description: "\(action) handed out nothing: \(transition)") }
        return request
    }

    /// The view at `seconds`.
    func screen(at seconds: TimeInterval = 3) -> SignInPageScreen { view(now: Page.at(seconds)) }
}
