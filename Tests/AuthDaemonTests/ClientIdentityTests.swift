import AuthSocketServer
import Foundation
import Testing

/// A client is known by its process, never by what it says.
@Suite struct ClientIdentityTests {
    @Test func flatpakAndSnapAppsAreKnownByTheirIDs() {
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

    @Test func aSandboxedProcessIsReadFromItsProcEntry() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("authd-proc-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: root) }
        let entry = root.appendingPathComponent("4242")
        try FileManager.default.createDirectory(at: entry, withIntermediateDirectories: true)
        // A binary replaced while it runs: the kernel appends " (deleted)" to the link's target.
        try FileManager.default.createSymbolicLink(atPath: entry.appendingPathComponent("exe").path, withDestinationPath: "/app/bin/gnome-maps (deleted)")
        try Data("0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-flatpak-org.gnome.Maps-81234.scope\n".utf8)
            .write(to: entry.appendingPathComponent("cgroup"))
        let identity = ClientIdentity.of(pid: 4242, procRoot: root.path)
        #expect(identity.executable == "/app/bin/gnome-maps")
        #expect(identity.appID == "org.gnome.Maps")
        #expect(identity.app == "org.gnome.Maps")
    }

    @Test func theExecutableComesFromProc() throws {
        let me = ClientIdentity.of(pid: getpid())
        #expect(me.executable == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
        #expect(me.app == me.executable || me.appID != nil)
        // A process that is gone has no executable, and is named so that nobody allows it by accident.
        #expect(ClientIdentity.of(pid: Int32.max).app == "(unknown executable)")
    }
}
