import FoundationEssentials
import Glibc
import NIOSSL

/// What a refusal message says about one certificate of the chain a server presented: its
/// names, its issuer, and its validity.
struct CertificateFacts: Sendable, Equatable {
    /// The subject and issuer names as encoded; equal for a self-issued (self-signed) certificate.
    var subject: [UInt8]
    var issuer: [UInt8]
    /// The common names (CN) of subject and issuer, made printable.
    var subjectCommonName: String?
    var issuerCommonName: String?
    /// The DNS names and IP addresses of the subject alternative names.
    var names: [String]
    var notValidBefore: Date
    var notValidAfter: Date

    /// Whether the certificate names itself as its issuer.
    var isSelfIssued: Bool { subject == issuer }

    /// The host names the certificate is for: its alternative names, else its common name.
    var hostNames: [String] { names.isEmpty ? subjectCommonName.map { [$0] } ?? [] : names }

    /// Reads `certificate`; nil when its encoding is not understood.
    init?(_ certificate: NIOSSLCertificate) {
        guard let der = try? certificate.toDERBytes() else { return nil }
        self.init(der: der)
    }

    /// Reads the DER encoding of a certificate (RFC 5280 §4.1); nil when it is not one.
    ///
    /// The validity is read here too, not through `NIOSSLCertificate.notValidAfter`, which stops
    /// the process on a time it cannot read: the certificate comes from a server that may be hostile.
    init?(der: [UInt8]) {
        guard let certificate = DERElement.elements(in: der[...])?.first, certificate.tag == DERElement.sequence,
              var fields = certificate.children?.first?.children else { return nil }
        // tbsCertificate: [0] version (optional), serialNumber, signature, issuer, validity, subject,
        // subjectPublicKeyInfo, [1] and [2] unique IDs (optional), [3] extensions (optional).
        if fields.first?.tag == 0xa0 { fields.removeFirst() }
        guard fields.count >= 6, fields[2].tag == DERElement.sequence, fields[4].tag == DERElement.sequence,
              let validity = fields[3].children, validity.count == 2,
              let notValidBefore = Self.time(validity[0]), let notValidAfter = Self.time(validity[1]) else { return nil }
        issuer = Array(fields[2].content)
        subject = Array(fields[4].content)
        issuerCommonName = Self.commonName(in: fields[2])
        subjectCommonName = Self.commonName(in: fields[4])
        names = fields.first { $0.tag == 0xa3 }.map(Self.alternativeNames) ?? []
        self.notValidBefore = notValidBefore
        self.notValidAfter = notValidAfter
    }

    /// A UTCTime (`YYMMDDHHMMSSZ`, 1950–2049) or GeneralizedTime (`YYYYMMDDHHMMSSZ`), the two
    /// forms RFC 5280 allows; nil for anything else.
    private static func time(_ element: DERElement) -> Date? {
        let text = element.content
        let yearDigits: Int
        switch (element.tag, text.count) {
        case (0x17, 13): yearDigits = 2
        case (0x18, 15): yearDigits = 4
        default: return nil
        }
        let start = text.startIndex
        func field(_ offset: Int, _ length: Int) -> Int? { HTTPDate.number(text[(start + offset)..<(start + offset + length)]) }
        guard text.last == UInt8(ascii: "Z"), var year = field(0, yearDigits), let month = field(yearDigits, 2),
              let day = field(yearDigits + 2, 2), let hour = field(yearDigits + 4, 2), let minute = field(yearDigits + 6, 2),
              let second = field(yearDigits + 8, 2) else { return nil }
        if yearDigits == 2 { year += year < 50 ? 2000 : 1900 }
        guard (1...12).contains(month), (1...HTTPDate.daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        let days = HTTPDate.daysSince1970(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// The last common name (2.5.4.3) of a Name, the one that counts.
    private static func commonName(in name: DERElement) -> String? {
        let attributes = (name.children ?? []).flatMap { $0.children ?? [] }.compactMap(\.children)
        guard let value = attributes.last(where: { $0.count == 2 && $0[0].tag == DERElement.objectIdentifier
                                                && Array($0[0].content) == [0x55, 0x04, 0x03] })?[1] else { return nil }
        // BMPString is UTF-16; the other string types are ASCII or UTF-8.
        let text = value.tag == 0x1e ? String(decoding: stride(from: value.content.startIndex, to: value.content.endIndex - 1, by: 2)
            .map { UInt16(value.content[$0]) << 8 | UInt16(value.content[$0 + 1]) }, as: UTF16.self)
            : String(decoding: value.content, as: UTF8.self)
        return printable(text)
    }

    /// The DNS names and IP addresses in the subjectAltName extension (2.5.29.17) of `extensions`.
    private static func alternativeNames(_ extensions: DERElement) -> [String] {
        guard let list = extensions.children?.first?.children,
              let alternative = list.compactMap(\.children).first(where: { $0.first?.tag == DERElement.objectIdentifier
                                                                         && Array($0[0].content) == [0x55, 0x1d, 0x11] }),
              let value = alternative.last, value.tag == DERElement.octetString,
              let names = DERElement.elements(in: value.content)?.first?.children else { return [] }
        return names.compactMap { name in
            switch name.tag {
            case 0x82: return printable(String(decoding: name.content, as: UTF8.self))
            case 0x87: return ipAddress(Array(name.content))
            default: return nil
            }
        }
    }

    private static func ipAddress(_ bytes: [UInt8]) -> String? {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return nil }
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `text` safe to print on a terminal: at most 64 characters, control and format characters
    /// (escape sequences, bidirectional overrides) replaced, since a hostile server chooses them.
    static func printable(_ text: String) -> String? {
        let cleaned = String(String.UnicodeScalarView(text.unicodeScalars.prefix(64).map { scalar in
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned: return "?"
            default: return scalar
            }
        }))
        return cleaned.isEmpty ? nil : cleaned
    }
}
