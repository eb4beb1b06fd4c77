import AuthdClient
import AuthProtocol
import FoundationGaps

/// While a page is open, Ctrl-C (SIGINT) closes it, so that nothing stays open for nobody: the
/// wait then ends with the page's cancellation, and authctl exits 130, as the shell expects of an
/// interrupted command. A second Ctrl-C (authd does not answer) exits at once.
final class InterruptCancels {
    private let watch: InterruptWatch?

    /// Whether Ctrl-C came.
    var happened: Bool { watch?.happened ?? false }

    /// Armed from now on: a Ctrl-C that comes as soon as this returns closes the page.
    init(profile: String?, flowID: String, socketPath: String) {
        watch = InterruptWatch {
            // A connection of its own: the main one is blocked waiting for the page.
            if let connection = try? AuthdConnection.connect(socketPath: socketPath) {
                _ = try? connection.call(Methods.CancelInteractiveSignIn.self, .init(profile: profile, flowID: flowID), timeout: 5)
                connection.close()
            }
        }
    }

    /// Ctrl-C ends authctl as usual again.
    func disarm() {
        watch?.disarm()
    }
}
