import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Putting the listening socket in place.
extension UnixSocketServer {
    /// Binds and listens under a staging name beside `path`, then renames the socket into place:
    /// a client that sees the path can connect at once (with a plain bind, the file exists a moment
    /// before `listen`, and a connect then is refused as if no daemon ran). The lock taken by
    /// `SocketDirectory.prepare` makes the staging name ours. A path too long for a staging name
    /// is bound directly.
    static func bindAtomically(_ bootstrap: ServerBootstrap, at path: String) async throws -> any Channel {
        let staging = path + ".new"
        guard staging.utf8.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            let server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true).get()
            chmod(path, 0o600)
            return server
        }
        let server = try await bootstrap.bind(unixDomainSocketPath: staging, cleanupExistingSocketFile: true).get()
        chmod(staging, 0o600)
        // rename() replaces whatever is at the path: only a socket (a crashed daemon's) may go.
        var existing = stat()
        let problem: String?
        if lstat(path, &existing) == 0, existing.st_mode & S_IFMT != S_IFSOCK {
            problem = "\(path) exists and is not a socket; refusing to replace it (move it away, or choose another AUTHD_SOCKET)"
        } else if rename(staging, path) != 0 {
            problem = "cannot move the socket into place at \(path): \(String(cString: strerror(errno)))"
        } else {
            problem = nil
        }
        if let problem {
            try? await server.close()
            unlink(staging)
            throw SocketSetupError(problem)
        }
        return server
    }
}
