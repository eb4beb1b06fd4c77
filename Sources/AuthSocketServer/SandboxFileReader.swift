import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// What `SO_PEERPIDFD` gave for a connection.
enum PeerPidfd: Sendable {
    /// A pidfd of the connected process, to be closed once the client is identified.
    case fd(Int32)
    /// The kernel has no `SO_PEERPIDFD` (before Linux 6.5): the pid alone names the client.
    case unsupported
    /// The kernel could not give one (the process already exited): the client is unidentified.
    case failed
}

/// Identifies a connection's client without ever blocking the event loop.
///
/// The kernel's own files (`/proc/<pid>/exe`, `cgroup`, `attr`) are read on the loop. A file
/// inside the client's root (a Flatpak's `/.flatpak-info`), which the client controls and could
/// make a FIFO or a FUSE file that never answers, is read on a thread of a small pool of its own,
/// for at most `limit`; a read that takes longer leaves the claim unconfirmed and its thread
/// stuck, so a client can at worst make later sandbox claims go unconfirmed, never stop the loop
/// that serves everyone else.
enum SandboxFileReader {
    /// How long a sandbox file may take.
    static let limit: TimeAmount = .seconds(2)

    /// The pool for those reads, started the first time a client claims a sandbox.
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return pool
    }()

    /// The identity of process `pid`, with `pidfd` closed once it has served.
    static func identify(pid: Int32, pidfd: PeerPidfd, on loop: EventLoop) -> EventLoopFuture<ClientIdentity> {
        let descriptor: Int32?
        switch pidfd {
        case .fd(let fd): descriptor = fd
        case .unsupported: descriptor = nil
        case .failed: return loop.makeSucceededFuture(ClientIdentity(unidentified: "the program exited before authd could tell which it was"))
        }
        let reading = ClientIdentity.Reading(pid: pid)
        let finish: @Sendable (String?) -> ClientIdentity = { appID in
            defer { if let descriptor { close(descriptor) } }
            return reading.finished(pidfd: descriptor, sandboxFiles: appID)
        }
        guard reading.needsSandboxFiles else { return loop.makeSucceededFuture(finish(nil)) }
        let promise = loop.makePromise(of: String?.self)
        let settled = NIOLoopBoundBox(false, eventLoop: loop)
        let timeout = loop.scheduleTask(in: limit) {
            guard !settled.value else { return }
            settled.value = true
            promise.succeed(nil)
        }
        pool.runIfActive(eventLoop: loop) { reading.readSandboxFiles() }.whenComplete { result in
            timeout.cancel()
            guard !settled.value else { return }
            settled.value = true
            promise.succeed((try? result.get()) ?? nil)
        }
        return promise.futureResult.map(finish)
    }
}
