import FoundationEssentials

/// How a browser redirect reached authd, which decides what it may carry.
public enum RedirectChannel: Sendable, Equatable {
    /// Handed over by a client that names the redirect's flow (`oauth.complete` with `flow_id`):
    /// the loopback listener that received it from the browser, on a socket of the user's own
    /// uid, so the redirect itself crossed no command line. An app's own handler for its scheme
    /// may name the flow too, which is why a token hash also needs a bound flow.
    case listener
    /// Handed over with nothing but the URL: `authctl open-url`, which the desktop's
    /// `x-scheme-handler` entry runs for an app's custom scheme. The launcher, `xdg-open`, the
    /// handler and authctl all had the URL as an argument, which every user of the computer can
    /// read in `/proc/PID/cmdline`.
    case commandLine

    /// The channel of a redirect handed over with its flow named, or not.
    public init(namesFlow: Bool) {
        self = namesFlow ? .listener : .commandLine
    }
}

/// What a redirect does to the pending flow it matched.
public enum RedirectDisposition: Sendable, Equatable {
    /// Completes the flow: the authorization code, to exchange with the flow's verifier.
    case exchangeCode(String)
    /// Completes the flow: an emailed link's token hash, to verify (`POST /verify`); the caller
    /// keeps the session only when it is the account the link was sent to.
    case verifyTokenHash(String, type: OTPType)
    /// Ends the flow with this failure.
    case end(OAuthFlowFailure)
    /// Refuses the redirect and leaves the flow waiting for its own.
    case refuse(OAuthFlowFailure)
}

/// Which redirect parameters authd takes through which channel, and what a redirect may do to
/// the flow it matched.
///
/// A PKCE `code` is taken from anywhere: without the flow's verifier, which never leaves authd,
/// it is useless. A credential that works for whoever sends it first (an email template's
/// `token_hash`, which `POST /verify` takes alone, or the implicit flow's tokens) is taken only
/// from the loopback listener of a bound flow. On a command line every user could have read it
/// and raced authd to the server with it; refused there, it is not used at all, so that authd
/// never races anyone for it and never signs in with a link a web page handed over.
///
/// Only a redirect bound to its flow (a loopback redirect carrying `authd_flow`) ends the flow
/// with an error or junk. An unbound flow (an app's custom scheme) ends only with its own code,
/// its expiry, a newer flow to its address or its client going away: any web page can open its
/// address with an `error` and an `error_description` of its choosing.
public enum RedirectRules {
    /// Parameters that hand a session to whoever sends them first: GoTrue's `{{ .TokenHash }}`,
    /// and the implicit flow's tokens (in a fragment).
    public static let bearerParameters = ["token_hash", "access_token", "refresh_token", "provider_token", "provider_refresh_token"]

    /// Why a redirect that came through `channel` is refused before any flow is looked for, nil
    /// when it is not: one handed over on a command line must carry no bearer credential.
    public static func screen(_ callback: URL, channel: RedirectChannel) -> OAuthFlowFailure? {
        guard channel == .commandLine else { return nil }
        let parameters = OAuthFlowBook.parameters(of: callback)
        guard let exposed = bearerParameters.first(where: { !(parameters[$0] ?? "").isEmpty }) else { return nil }
        return .exposedCredential(parameter: exposed)
    }

    /// Whether `callback` is bound to `flow`: the flow's redirect carries the flow's binding (a
    /// loopback redirect does; a custom scheme's cannot), and so does the callback.
    public static func isBound(_ callback: URL, to flow: OAuthFlow) -> Bool {
        flow.isBound && OAuthFlowBook.parameters(of: callback)[OAuthFlow.bindingParameter] == flow.id
    }

    /// What the redirect `callback`, which came through `channel`, does to `flow`, the pending
    /// flow `OAuthFlowBook.match` found for it.
    public static func disposition(of callback: URL, for flow: OAuthFlow, channel: RedirectChannel, now: Date) -> RedirectDisposition {
        if let refusal = screen(callback, channel: channel) { return .refuse(refusal) }
        if OAuthFlowBook.isExpired(flow, now: now) { return .end(.expired) }
        let bound = isBound(callback, to: flow)
        // Whatever is not the flow's own code ends only a flow the redirect is bound to.
        let failing = { (failure: OAuthFlowFailure) -> RedirectDisposition in bound ? .end(failure) : .refuse(failure) }
        let parameters = OAuthFlowBook.parameters(of: callback)
        if let hash = parameters["token_hash"], !hash.isEmpty {
            guard flow.kind == .emailLink || flow.kind == .recoveryLink else {
                return failing(.malformedCallback("a token_hash answers only an emailed link's sign-in"))
            }
            guard bound, channel == .listener else { return .refuse(.exposedCredential(parameter: "token_hash")) }
            guard let text = parameters["type"], let type = OTPType(rawValue: text), ![.sms, .phoneChange].contains(type) else {
                return .end(.malformedCallback("the link's type is not one an emailed link verifies"))
            }
            return .verifyTokenHash(hash, type: type)
        }
        if let error = parameters["error"] ?? parameters["error_code"] {
            guard bound else { return .refuse(.unboundError) }
            return .end(.provider(error: error, code: parameters["error_code"], description: parameters["error_description"]))
        }
        guard let code = parameters["code"], !code.isEmpty else {
            return failing(.malformedCallback("the redirect carries neither a code nor an error"))
        }
        return .exchangeCode(code)
    }

    /// Whether a flow goes on waiting after the server refused the code a redirect brought, with
    /// `serverCode`: only for a flow the redirect is not bound to (a custom scheme's, which any
    /// web page can open with a code of its own or none), and only when the server said the code
    /// is not this flow's (unknown, or made for another verifier). Its own code still completes it.
    public static func keepsWaiting(afterRefusal serverCode: String?, bound: Bool) -> Bool {
        guard !bound, let serverCode else { return false }
        return serverCode == "flow_state_not_found" || serverCode == "bad_code_verifier"
    }
}
