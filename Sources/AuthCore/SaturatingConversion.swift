import FoundationEssentials

extension Int64 {
    /// `value` rounded by `rule` and clamped to `Int64`'s range; NaN becomes 0.
    ///
    /// Swift's `Int64(_: Double)` traps on NaN, infinities and values past ±2⁶³, and every
    /// number authd turns into an integer for the wire, a timer or a message may come from a
    /// client, a server or a file: this conversion cannot trap.
    public init(saturating value: Double, rounding rule: FloatingPointRoundingRule = .towardZero) {
        let rounded = value.rounded(rule)
        if rounded.isNaN {
            self = 0
        } else if rounded >= 9_223_372_036_854_775_807 {
            // 2⁶³ is the first Double past Int64.max; every Double from there up saturates.
            self = .max
        } else if rounded <= -9_223_372_036_854_775_808 {
            self = .min
        } else {
            self = Int64(rounded)
        }
    }
}

extension Int {
    /// `value` rounded by `rule` and clamped to `Int`'s range; NaN becomes 0. See
    /// `Int64.init(saturating:rounding:)`.
    public init(saturating value: Double, rounding rule: FloatingPointRoundingRule = .towardZero) {
        self = Int(truncatingIfNeeded: Int64(saturating: value, rounding: rule))
    }
}
