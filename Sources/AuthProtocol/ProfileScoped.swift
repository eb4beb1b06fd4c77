/// Parameters that may name a profile. Every method's parameters conform, so the daemon can
/// decide who may call a method on which profile before it runs, in one place.
public protocol ProfileScoped: Sendable {
    /// The profile the request is for; nil for the default one (or for a method that concerns
    /// no profile).
    var profile: String? { get }
}

extension ProfileParameters: ProfileScoped {}
extension Methods.Hello.Parameters: ProfileScoped {
    /// `hello` concerns no profile.
    public var profile: String? { nil }
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
extension Methods.UpdateUser.Parameters: ProfileScoped {}
extension Methods.DecideApp.Parameters: ProfileScoped {}
