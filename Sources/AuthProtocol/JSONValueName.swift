import FoundationGaps

/// Any JSON value, for objects authd passes through without interpreting them (the server's user
/// object, `user_metadata`). Defined beside the other things FoundationEssentials lacks, where the
/// GoTrue adapter, which does not see the wire contract, uses it too.
public typealias JSONValue = FoundationGaps.JSONValue
