import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// Asking the kernel who is on the other end of a connection.
extension UnixSocketServer {
    /// `SO_PEERPIDFD` (Linux 6.5+): a pidfd of the connected process, which tells whether the pid
    /// still names it after its `/proc` entry was read. Only ENOPROTOOPT means the kernel has no
    /// such option; any other failure (the process already exited) leaves the client unidentified.
    static func peerPidfd(of channel: Channel) -> EventLoopFuture<PeerPidfd> {
        guard let provider = channel as? SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(.unsupported) }
        let future: EventLoopFuture<Int32> = provider.unsafeGetSocketOption(level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET),
                                                                          name: NIOBSDSocket.Option(rawValue: PeerPidfdSupport.option))
        return future.map { fd in fd >= 0 ? .fd(fd) : .failed }.recover { error in
            (error as? IOError)?.errnoCode == ENOPROTOOPT ? .unsupported : .failed
        }
    }

    /// `SO_PEERCRED`: the connected process's pid, uid and gid; fails (`PeerRefused`) on a channel
    /// that cannot report them.
    static func peerCredentials(of channel: Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(PeerRefused())
        }
        return provider.unsafeGetSocketOption(level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET),
                                              name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
    }
}

/// A channel that reports no peer credentials.
struct PeerRefused: Error {}
