import AuthTestSupport
import AuthSocketServer
import Foundation
import Testing

/// A client is known by its process, never by what it says.
@Suite struct ClientIdentityTests {
    @Test func flatpakAndSnapScopesAreReadAsClaims() {
        let flatpak = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.gnome.Maps-81234.scope\n"
        #expect(ClientIdentity.appID(fromCgroup: flatpak) == "org.gnome.Maps")
        let snapNew = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.firefox.firefox-2c6a3e1f-8e4b-4a57-9b8b-2a1c9f0e3d11.scope\n"
        #expect(ClientIdentity.appID(fromCgroup: snapNew) == "snap.firefox")
        let snapOld = "12:pids:/user.slice/user-1000.slice/user@1000.service/snap.code.code.7b1d1f5e-0c1b-4b8f-8d5e-6f2f4e0a9c3d.scope\n"
        #expect(ClientIdentity.appID(fromCgroup: snapOld) == "snap.code")
    }

    @Test func ordinaryProcessesAndLookalikesHaveNoAppID() {
        #expect(ClientIdentity.appID(fromCgroup: "0::/user.slice/user-1000.slice/session-2.scope\n") == nil)
        #expect(ClientIdentity.appID(fromCgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-org.gnome.Terminal-1234.scope\n") == nil)
        #expect(ClientIdentity.appID(fromCgroup: "0::/app-flatpak-.scope\n") == nil)
        #expect(ClientIdentity.appID(fromCgroup: "0::/app-flatpak-org.example.App-notanumber.scope\n") == nil)
        #expect(ClientIdentity.appID(fromCgroup: "") == nil)
    }

    /// A fake `/proc/4242` with the given executable link, cgroup and extra files. Unless told
    /// otherwise it sees the user's files: this process's mount namespace and `/` as its root
    /// (a `root/` among `files` makes a root of its own).
    private func procEntry(exe: String, cgroup: String, files: [String: String] = [:],
                           namespace: String? = nil) throws -> (root: URL, cleanup: () -> Void) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("authd-proc-\(UUID().uuidString.prefix(8))")
        let entry = root.appendingPathComponent("4242")
        try FileManager.default.createDirectory(at: entry.appendingPathComponent("ns"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: entry.appendingPathComponent("exe").path, withDestinationPath: exe)
        let ownNamespace = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/mnt")
        try FileManager.default.createSymbolicLink(atPath: entry.appendingPathComponent("ns/mnt").path, withDestinationPath: namespace ?? ownNamespace)
        if !files.keys.contains(where: { $0.hasPrefix("root/") }) {
            try FileManager.default.createSymbolicLink(atPath: entry.appendingPathComponent("root").path, withDestinationPath: "/")
        }
        try Data(cgroup.utf8).write(to: entry.appendingPathComponent("cgroup"))
        for (name, text) in files {
            let file = entry.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        return (root, { try? FileManager.default.removeItem(at: root) })
    }

    static let flatpakScope = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.gnome.Maps-81234.scope\n"

    @Test func aFlatpakAppIsKnownByTheIDInItsSandboxsFlatpakInfo() throws {
        // A binary replaced while it runs: the kernel appends " (deleted)" to the link's target.
        let (root, cleanup) = try procEntry(exe: "/app/bin/gnome-maps (deleted)", cgroup: Self.flatpakScope,
                                            files: ["root/.flatpak-info": "[Application]\nname=org.gnome.Maps\nruntime=runtime/org.gnome.Platform/x86_64/46\n"])
        defer { cleanup() }
        let identity = ClientIdentity.of(pid: 4242, procRoot: root.path)
        #expect(identity.executable == "/app/bin/gnome-maps")
        #expect(identity.appID == "org.gnome.Maps")
        #expect(identity.app == "org.gnome.Maps")
    }

    @Test func aScopeNamedLikeAFlatpakWithoutTheSandboxIsAnOrdinaryProgram() throws {
        // `systemd-run --user --scope --unit=app-flatpak-org.gnome.Maps-81234 ./impostor`
        let (root, cleanup) = try procEntry(exe: "/usr/bin/env", cgroup: Self.flatpakScope)
        defer { cleanup() }
        let identity = ClientIdentity.of(pid: 4242, procRoot: root.path)
        #expect(identity.appID == nil)
        #expect(identity.app == "/usr/bin/env")
    }

    /// The path in /proc/<pid>/exe is the program's own view: it must lead, in authd's view, to
    /// the very file the program runs, or the program is unidentified (a binary replaced since it
    /// started, or a path bind-mounted over in a mount namespace of the program's own).
    @Test func aPathThatDoesNotLeadToTheRunningFileIsNotAName() throws {
        let (root, cleanup) = try procEntry(exe: "/nonexistent/authctl-full", cgroup: "0::/user.slice/session-2.scope\n")
        defer { cleanup() }
        let identity = ClientIdentity.of(pid: 4242, procRoot: root.path)
        #expect(!identity.isIdentified)
        #expect(identity.unidentified?.contains("is not the file this program runs") == true, "\(identity)")
    }

    /// A program in a mount namespace of its own (a Flatpak started without its scope, `unshare
    /// -m`, bwrap) or under a root of its own sees files the user's programs do not: its path,
    /// even one that leads here to the file it runs, names none of the user's programs.
    @Test func aProgramThatSeesOtherFilesIsUnidentifiedUnlessItIsAConfirmedSandbox() throws {
        let (namespaced, cleanNamespaced) = try procEntry(exe: "/usr/bin/env", cgroup: "0::/user.slice/session-2.scope\n", namespace: "mnt:[1]")
        defer { cleanNamespaced() }
        let inNamespace = ClientIdentity.of(pid: 4242, procRoot: namespaced.path)
        #expect(!inNamespace.isIdentified)
        #expect(inNamespace.unidentified?.contains("mount namespace or root of its own") == true, "\(inNamespace)")

        let (rooted, cleanRooted) = try procEntry(exe: "/usr/bin/env", cgroup: "0::/user.slice/session-2.scope\n", files: ["root/etc/hostname": "chroot\n"])
        defer { cleanRooted() }
        #expect(!ClientIdentity.of(pid: 4242, procRoot: rooted.path).isIdentified)

        // The same program seeing the user's files is named by its path; a confirmed Flatpak, in
        // a namespace and root of its own as every Flatpak is, by its app id.
        let (plain, cleanPlain) = try procEntry(exe: "/usr/bin/env", cgroup: "0::/user.slice/session-2.scope\n")
        defer { cleanPlain() }
        #expect(ClientIdentity.of(pid: 4242, procRoot: plain.path).app == "/usr/bin/env")
        let (flatpak, cleanFlatpak) = try procEntry(exe: "/app/bin/x", cgroup: Self.flatpakScope, files: ["root/.flatpak-info": "[Application]\nname=org.example.Real\n"],
                                                    namespace: "mnt:[1]")
        defer { cleanFlatpak() }
        #expect(ClientIdentity.of(pid: 4242, procRoot: flatpak.path).app == "org.example.Real")
    }

    /// The installed unit gives authd a mount namespace of its own; the user's programs share the
    /// user manager's, which started authd. Either is the user's; a view the kernel would not show
    /// (nil) is none; and with no view of its own known, authd names no client by its path.
    @Test func theUsersViewsAreAuthdsOwnAndItsStartersAndTheRootMustMatchToo() throws {
        // Under the installed unit: authd's namespace and root mount are its own; the manager's
        // are the user's.
        let own = MountView(namespace: "mnt:[10]", rootDevice: 1, rootInode: 2, rootMount: 700)
        let starter = MountView(namespace: "mnt:[11]", rootDevice: 1, rootInode: 2, rootMount: 30)
        let users = MountView.users(own: own, starter: starter)
        #expect(users == [own, starter])
        #expect(MountView(namespace: "mnt:[11]", rootDevice: 1, rootInode: 2, rootMount: 30).isUsers(users))
        #expect(!MountView(namespace: "mnt:[12]", rootDevice: 1, rootInode: 2, rootMount: 30).isUsers(users))
        #expect(!MountView(namespace: "mnt:[11]", rootDevice: 1, rootInode: 3, rootMount: 30).isUsers(users))
        // The user's namespace with another namespace's root borrowed through /proc/<pid>/root
        // (a chroot into it): the same directory, on another mount.
        #expect(!MountView(namespace: "mnt:[11]", rootDevice: 1, rootInode: 2, rootMount: 912).isUsers(users))
        // Nor authd's root in the user's namespace: each view is whole.
        #expect(!MountView(namespace: "mnt:[11]", rootDevice: 1, rootInode: 2, rootMount: 700).isUsers(users))
        // Started by hand: one view. Not even its own readable: none, and no path is a name.
        #expect(MountView.users(own: own, starter: own) == [own])
        #expect(MountView.users(own: own, starter: nil) == [own])
        #expect(MountView.users(own: nil, starter: starter).isEmpty)
        #expect(!own.isUsers([]))
        let (plain, cleanPlain) = try procEntry(exe: "/usr/bin/env", cgroup: "0::/user.slice/session-2.scope\n")
        defer { cleanPlain() }
        let reading = ClientIdentity.Reading(pid: 4242, procRoot: plain.path)
        #expect(reading.finished(pidfd: nil, sandboxFiles: nil).isIdentified)
        #expect(!reading.finished(pidfd: nil, sandboxFiles: nil, users: []).isIdentified)
        // This process's own view is read from the kernel, and is among the user's.
        let mine = try #require(MountView.of(entry: "/proc/self"))
        #expect(mine.namespace.hasPrefix("mnt:["))
        #expect(mine.isUsers())
    }

    /// A file inside a client's root is the client's to make: a FIFO there (or anything but a
    /// regular file) is not read, and reading it does not wait for a writer.
    @Test func aFlatpakInfoThatIsAFIFOIsNotWaitedFor() throws {
        let (root, cleanup) = try procEntry(exe: "/app/bin/x", cgroup: Self.flatpakScope, files: ["root/usr/.keep": ""])
        defer { cleanup() }
        let sandboxRoot = root.appendingPathComponent("4242/root")
        #expect(mkfifo(sandboxRoot.appendingPathComponent(".flatpak-info").path, 0o600) == 0)
        let started = Date()
        let reading = ClientIdentity.Reading(pid: 4242, procRoot: root.path)
        #expect(reading.needsSandboxFiles)
        #expect(reading.readSandboxFiles() == nil)
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(!reading.finished(pidfd: nil, sandboxFiles: nil).isIdentified)
    }

    @Test func theFlatpakInfoNamesTheAppWhateverTheScopeClaims() throws {
        let (root, cleanup) = try procEntry(exe: "/app/bin/x", cgroup: Self.flatpakScope, files: ["root/.flatpak-info": "[Application]\nname=org.example.Real\n"])
        defer { cleanup() }
        #expect(ClientIdentity.of(pid: 4242, procRoot: root.path).appID == "org.example.Real")
    }

    @Test func aSnapIsKnownOnlyWhenSnapdsAppArmorProfileConfinesIt() throws {
        let scope = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.firefox.firefox-2c6a3e1f-8e4b-4a57-9b8b-2a1c9f0e3d11.scope\n"
        let (confined, cleanConfined) = try procEntry(exe: "/snap/firefox/4/usr/lib/firefox/firefox", cgroup: scope,
                                                      files: ["attr/apparmor/current": "snap.firefox.firefox (enforce)\n"])
        defer { cleanConfined() }
        #expect(ClientIdentity.of(pid: 4242, procRoot: confined.path).appID == "snap.firefox")
        let (impostor, cleanImpostor) = try procEntry(exe: "/usr/bin/env", cgroup: scope, files: ["attr/apparmor/current": "unconfined\n"])
        defer { cleanImpostor() }
        #expect(ClientIdentity.of(pid: 4242, procRoot: impostor.path).appID == nil)
        #expect(ClientIdentity.of(pid: 4242, procRoot: impostor.path).app == "/usr/bin/env")
    }

    @Test func theExecutableComesFromProcAndAGoneProcessIsUnidentified() throws {
        let me = ClientIdentity.of(pid: getpid())
        #expect(me.executable == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
        #expect(me.isIdentified)
        let gone = ClientIdentity.of(pid: Int32.max)
        #expect(!gone.isIdentified)
        #expect(gone.unidentified?.contains("exited") == true, "\(gone)")
        // No two unidentified clients share a name a decision could match.
        #expect(gone.app != ClientIdentity(executable: "", appID: nil).app)
        #expect(gone.app.hasPrefix("(unidentified client"))
    }

    /// With the connecting process's pidfd, a client that exited (its pid free for another
    /// program) is unidentified rather than taken for whatever runs under that pid now.
    @Test func aPidfdTellsALiveClientFromOneThatExited() async throws {
        try await offPool {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-pidfd-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("s.sock").path
            let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(listener) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8)) }
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
            #expect(bound == 0)
            #expect(listen(listener, 1) == 0)

            // posix_spawn and waitpid, not Foundation's Process: the test reaps the child itself.
            var pid: pid_t = 0
            let arguments = ["/usr/bin/python3", "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.recv(1)", path]
            var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            #expect(posix_spawn(&pid, "/usr/bin/python3", nil, nil, &argv, environ) == 0)
            let connection = accept(listener, nil, nil)
            defer { close(connection) }
            var pidfd: Int32 = -1
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(connection, SOL_SOCKET, 77 /* SO_PEERPIDFD */, &pidfd, &length) == 0 else {
                // Linux before 6.5: nothing to check; authd then reads by pid alone.
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                return
            }
            defer { close(pidfd) }
            #expect(ClientIdentity.stillRuns(pidfd: pidfd))
            #expect(ClientIdentity.of(pid: pid, pidfd: pidfd).isIdentified)
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            #expect(!ClientIdentity.stillRuns(pidfd: pidfd))
            #expect(!ClientIdentity.of(pid: pid, pidfd: pidfd).isIdentified)
        }
    }
}
