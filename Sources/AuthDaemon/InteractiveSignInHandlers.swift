import AuthCore
import AuthProtocol
import FoundationEssentials

/// Handlers of authd's own sign-in page: `session.beginInteractiveSignIn`,
/// `session.waitForInteractiveSignIn` and `session.cancelInteractiveSignIn`.
extension DaemonMethods {
    static func registerInteractiveSignInMethods(_ table: inout MethodTable, registry: ProfileRegistry) {
        table.register(Methods.BeginInteractiveSignIn.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // `validate()` has let through only the forms there are, and a plausible address.
            let options = SignInPageFlow.Options(email: ParameterRules.shortText(parameters.email), offerEnrolment: parameters.aal == "aal2",
                                                 method: parameters.method.flatMap(SignInPageMethod.init(form:)))
            switch await profile.pages.begin(options, owner: connection.client.app, openBrowser: parameters.openBrowser ?? true) {
            case .success(let begun):
                return .init(flowID: begun.flowID, url: begun.url, expiresIn: Int(SignInPageFlow.lifetime), browserOpened: begun.browserOpened)
            case .failure(.unavailable(let why)):
                throw .application(.signInFailed, "\(why): sign in with 'authctl login --email ADDRESS' instead")
            case .failure(.tooMany(let limit)):
                throw .application(.busy, "\(limit) sign-in pages are open for this profile already: finish or cancel one, or wait \(Int(SignInPageFlow.lifetime / 60)) minutes")
            }
        }

        table.register(Methods.WaitForInteractiveSignIn.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // A client that hangs up stops waiting, and gives its connection's slot back; the
            // page stays open for another wait (the next `authctl login` finds it).
            let pages = profile.pages
            switch await connection.hangUp.cancellingOnEnd({ await pages.wait(for: parameters.flowID) }) {
            case .ended(let end):
                if let error = InteractiveSignInErrorText.error(end, now: profile.session.clock.now()) { throw error }
                return await profile.session.status()
            case .unknown:
                throw .application(.signInFailed, "no sign-in page '\(parameters.flowID)' is open or ended lately: start one with session.beginInteractiveSignIn")
            case .stopped:
                // A hung-up client's wait ends this way too; its answer goes nowhere.
                throw .application(.signInCancelled, "the sign-in page closed before the sign-in ended: authd is stopping")
            }
        }

        table.register(Methods.CancelInteractiveSignIn.self, for: .profileUsers) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            return .init(cancelled: await profile.pages.cancel(parameters.flowID, owner: connection.client.app))
        }
    }
}

/// How a sign-in page that did not sign in ended, as the error `session.waitForInteractiveSignIn`
/// answers: a stable reason and what to do next.
enum InteractiveSignInErrorText {
    /// The error for `end` at `now`; nil when it signed in.
    static func error(_ end: SignInPageEnd, now: Date) -> RPCErrorObject? {
        switch end {
        case .signedIn:
            return nil
        case .cancelled(let account?):
            let name = account.name ?? "an anonymous user"
            return .application(.signInCancelled, "the sign-in was cancelled (on the page, or by the app that opened it) after \(name) had signed in at \(account.level.rawValue), without the second factor or new password it was to ask for: that session stays; run 'authctl mfa verify' or sign in again")
        case .cancelled:
            return .application(.signInCancelled, "the sign-in was cancelled, on the page or by the app that opened it")
        case .expired:
            return .application(.flowExpired, "the sign-in page was left open longer than \(Int(SignInPageFlow.lifetime / 60)) minutes: start again")
        case .failed(let error):
            return .application(.signInFailed, "the sign-in page could not go on: \(error.message(now: now))")
        }
    }
}
