import Foundation

/// Appends lines to a file that a test reads while the server runs (created on first use).
struct LineFile: Sendable {
    let path: String

    /// Appends `line` and a newline.
    func append(_ line: Data) {
        guard let handle = FileHandle(forWritingAtPath: path)
                ?? (FileManager.default.createFile(atPath: path, contents: nil) ? FileHandle(forWritingAtPath: path) : nil) else { return }
        handle.seekToEndOfFile()
        handle.write(line + Data("\n".utf8))
        try? handle.close()
    }
}
