import CQRencode

/// The QR code of a TOTP factor's `otpauth://` URI as GoTrue sends it in `totp.qr_code`: an SVG
/// document (GoTrue draws it with a Go QR library; the modules are the same whatever draws them),
/// encoded by libqrencode, so that what a sign-in page shows can be scanned like the real one.
enum DevQRCode {
    /// An SVG of `text`'s QR code (error correction M), four modules of quiet zone around it,
    /// four pixels a module; a white square with the reason when libqrencode cannot encode it.
    static func svg(of text: String) -> String {
        let scale = 4, quiet = 4
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else {
            return #"<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"><!-- too long for a QR code --><rect width="100" height="100" fill="white"/></svg>"#
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let modules = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        let size = (width + 2 * quiet) * scale
        var rects = ""
        // libqrencode sets bit 0 of a module's byte when it is dark.
        for y in 0..<width {
            for x in 0..<width where modules[y * width + x] & 1 == 1 {
                rects += #"<rect x="\#((x + quiet) * scale)" y="\#((y + quiet) * scale)" width="\#(scale)" height="\#(scale)"/>"#
            }
        }
        return """
        <?xml version="1.0"?>
        <svg xmlns="http://www.w3.org/2000/svg" width="\(size)" height="\(size)" viewBox="0 0 \(size) \(size)">\
        <rect width="\(size)" height="\(size)" fill="white"/><g fill="black">\(rects)</g></svg>

        """
    }
}
