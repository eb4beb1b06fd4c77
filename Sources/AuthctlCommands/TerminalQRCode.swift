import CQRencode

/// A QR code drawn with Unicode half blocks, two modules a character cell high, for an
/// authenticator app to scan off the terminal. Encoded by libqrencode (error correction M).
enum TerminalQRCode {
    /// The lines of the code of `text` with a quiet zone of four modules, colored explicitly
    /// (light modules white, dark ones black) so that it reads the same on light and dark
    /// terminal themes; nil when libqrencode cannot encode it (too long).
    static func lines(_ text: String) -> [String]? {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let modules = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        let quiet = 4
        let size = width + 2 * quiet
        // libqrencode sets bit 0 of a module's byte when it is dark; the quiet zone is light.
        func isLight(_ row: Int, _ column: Int) -> Bool {
            let (x, y) = (column - quiet, row - quiet)
            guard x >= 0, y >= 0, x < width, y < width else { return true }
            return modules[y * width + x] & 1 == 0
        }
        var lines: [String] = []
        for row in stride(from: 0, to: size, by: 2) {
            var line = "\u{1B}[97;40m"
            for column in 0..<size {
                switch (isLight(row, column), row + 1 < size && isLight(row + 1, column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + "\u{1B}[0m")
        }
        return lines
    }
}
