import AuthCore
import Foundation

/// Builders for test values.
public enum Fixtures {
    /// A fixed instant tests measure from.
    public static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// A session received at `receivedAt` that lives `lifetime` seconds.
    public static func session(_ n: Int = 1, receivedAt: Date = t0, lifetime: TimeInterval = 3600) -> Session {
        Session(accessToken: "access-\(n)", refreshToken: "refresh-\(n)", expiresAt: receivedAt.addingTimeInterval(lifetime),
                receivedAt: receivedAt, user: UserSummary(id: "user-1", email: "a@example.com"))
    }

    /// A grant as GoTrue would return it.
    public static func grant(_ n: Int, lifetime: Int = 3600) -> SessionGrant {
        SessionGrant(accessToken: "access-\(n)", refreshToken: "refresh-\(n)", expiresIn: lifetime,
                     user: UserSummary(id: "user-1", email: "a@example.com"))
    }

    /// An access token in JWT form whose claims state `aal` and the `amr` methods (most recent
    /// first), plus `extraClaims` (JSON members, comma-separated); its signature is made up:
    /// what reads the claims does not check it.
    public static func accessToken(aal: String, amr: [String] = ["password"], sub: String = "user-1", extraClaims: String = "") -> String {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        let methods = amr.map { #"{"method":"\#($0)","timestamp":1800000000}"# }.joined(separator: ",")
        let extra = extraClaims.isEmpty ? "" : "," + extraClaims
        return part(#"{"alg":"HS256","typ":"JWT"}"#) + "." + part(#"{"sub":"\#(sub)","aal":"\#(aal)","amr":[\#(methods)],"exp":1800003600\#(extra)}"#) + ".c2ln"
    }
}
