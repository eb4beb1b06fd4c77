import FoundationEssentials

/// The name a second factor added on the sign-in page gets. GoTrue refuses a factor whose name
/// another factor of the user has (`mfa_factor_name_conflict`), unverified ones included, and
/// keeps an abandoned one (its QR code shown, never verified) for a day: a name of its own each
/// time lets the user try again at once. The time it was added, to the second, in UTC, also
/// tells the user which is which in a list of factors.
enum SignInPageFactorName {
    /// "Authenticator app, added 2027-01-15 08:00:01 UTC", or "Phone, added …".
    static func name(for kind: FactorKind, at date: Date) -> String {
        (kind == .totp ? "Authenticator app" : "Phone") + ", added " + utcText(date)
    }

    /// `date` as `YYYY-MM-DD hh:mm:ss UTC`, from the days since 1970 by the proleptic Gregorian
    /// calendar (without a formatter: the core has no locale or calendar to depend on).
    static func utcText(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        // Howard Hinnant's civil_from_days.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(year)-\(two(month))-\(two(day)) \(two(second / 3600)):\(two(second / 60 % 60)):\(two(second % 60)) UTC"
    }
}
