/// Parameters that may name a profile. Every method's parameters conform, so the daemon can
/// decide who may call a method on which profile before it runs, in one place.
public protocol ProfileScoped: Sendable {
    /// The profile the request is for; nil for the default one (or for a method that concerns
    /// no profile). Settable so that the daemon names the default once per request, for its
    /// admission and its handler alike.
    var profile: String? { get set }
}

extension ProfileParameters: ProfileScoped {}
extension Methods.Hello.Parameters: ProfileScoped {
    /// `hello` concerns no profile: always nil.
    public var profile: String? {
        get { nil }
        set {} // nothing to keep: hello is answered the same for every profile
    }
}
extension Methods.Token.Parameters: ProfileScoped {}
extension Methods.SignInWithPassword.Parameters: ProfileScoped {}
extension Methods.SignOut.Parameters: ProfileScoped {}
extension Methods.SignUp.Parameters: ProfileScoped {}
extension Methods.SendCode.Parameters: ProfileScoped {}
extension Methods.VerifyCode.Parameters: ProfileScoped {}
extension Methods.SignInWithIdToken.Parameters: ProfileScoped {}
extension Methods.OAuthBegin.Parameters: ProfileScoped {}
extension Methods.OAuthComplete.Parameters: ProfileScoped {}
extension Methods.OAuthWait.Parameters: ProfileScoped {}
extension Methods.BeginInteractiveSignIn.Parameters: ProfileScoped {}
extension InteractiveSignInParameters: ProfileScoped {}
extension Methods.UpdateUser.Parameters: ProfileScoped {}
extension Methods.DecideApp.Parameters: ProfileScoped {}
extension Methods.EnrollFactor.Parameters: ProfileScoped {}
extension Methods.ChallengeFactor.Parameters: ProfileScoped {}
extension Methods.VerifyFactor.Parameters: ProfileScoped {}
extension Methods.UnenrollFactor.Parameters: ProfileScoped {}
extension Methods.SignInAnonymously.Parameters: ProfileScoped {}
extension Methods.SignInWithRefreshToken.Parameters: ProfileScoped {}
extension Methods.Resend.Parameters: ProfileScoped {}
extension Methods.UnlinkIdentity.Parameters: ProfileScoped {}
extension Methods.SingleSignOnBegin.Parameters: ProfileScoped {}

/// Parameters with rules beyond their types, checked by the daemon after decoding and before
/// anything else, on every path a request takes.
public protocol ValidatedParameters {
    /// Throws the error to answer when the parameters break a rule.
    func validate() throws(RPCErrorObject)
}

/// A method whose lines have a hand-written codec beside the general one (`RPCCodec`): every
/// side (the daemon, the client library, authctl's front) goes through these first and falls
/// back to the general codec when they answer nil.
public protocol HandWrittenLines: RPCMethod {
    /// The id and parameters of the request line in `bytes` (without its newline), when it has
    /// the common shape.
    static func readRequest(_ bytes: UnsafeRawBufferPointer) -> (id: RPCID, parameters: Parameters)?
    /// The request line, newline included.
    static func writeRequest(_ parameters: Parameters, id: RPCID) -> [UInt8]?
    /// The result of a successful answer line to `id` in the common shape.
    static func readResult(_ line: [UInt8], answering id: RPCID) -> Result?
    /// The answer line, newline included.
    static func writeResult(_ result: Result, id: RPCID) -> [UInt8]?
}

extension HandWrittenLines {
    /// `writeRequest` for parameters known only as `Any` (a caller generic over `RPCMethod`).
    public static func writeAnyRequest(_ parameters: Any, id: RPCID) -> [UInt8]? {
        (parameters as? Parameters).flatMap { writeRequest($0, id: id) }
    }

    /// `readResult` for a caller generic over `RPCMethod`.
    public static func readAnyResult(_ line: [UInt8], answering id: RPCID) -> Any? {
        readResult(line, answering: id)
    }

    /// `writeResult` for a result known only as `Any` (a caller generic over `RPCMethod`).
    public static func writeAnyResult(_ result: Any, id: RPCID) -> [UInt8]? {
        (result as? Result).flatMap { writeResult($0, id: id) }
    }
}
