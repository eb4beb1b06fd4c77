import ArgumentParser
import Glibc

/// The entry point of the whole `authctl`, which the `authd` executable runs when it is started
/// under a name beginning with `authctl` (authctl's front starts it so). One executable for the
/// daemon and the command-line tool carries the Swift runtime, FoundationEssentials and the shared
/// modules once (docs/benchmarks.md, installed size).
public enum AuthctlProgram {
    /// Whether `name` (the program's `argv[0]`) asks for authctl rather than the daemon.
    public static func isInvoked(as name: String) -> Bool {
        name.split(separator: "/").last?.hasPrefix("authctl") ?? false
    }

    /// Parses the command line, runs the command and exits with its status.
    public static func run() -> Never {
        Authctl.main()
        exit(0)
    }
}
