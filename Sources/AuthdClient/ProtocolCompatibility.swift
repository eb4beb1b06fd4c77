import AuthProtocol

/// Compares the daemon's protocol version with this library's.
///
/// Minor versions only add fields and methods, which readers ignore, so only a different major
/// version is worth a word. The library goes on either way: the calls it makes may still work.
public enum ProtocolCompatibility {
    /// The major part of a `major.minor` version; nil when it is not a number.
    public static func major(of version: String) -> Int? {
        Int(version.split(separator: ".", maxSplits: 1).first ?? "")
    }

    /// The warning to show for a daemon speaking `daemonVersion`, or nil when there is nothing to say.
    public static func warning(daemonVersion: String, clientVersion: String = ProtocolVersion.current) -> String? {
        guard let daemon = major(of: daemonVersion), let client = major(of: clientVersion) else {
            return "authd reports protocol version '\(daemonVersion)', which this client (protocol \(clientVersion)) cannot read; calls may fail"
        }
        if daemon > client {
            return "authd speaks protocol \(daemonVersion), newer than this client's \(clientVersion): update the client library (calls may fail)"
        }
        if daemon < client {
            return "authd speaks protocol \(daemonVersion), older than this client's \(clientVersion): update authd (calls may fail)"
        }
        return nil
    }
}
