import ArgumentParser
import AuthctlCommands

// One executable, two programs: the daemon, and the whole command-line tool when started under a
// name beginning with `authctl` (as authctl's front starts it for every command but a plain
// `authctl token`). Sharing the executable shares the Swift runtime, FoundationEssentials and the
// modules both use, which would otherwise be installed twice.
if AuthctlProgram.isInvoked(as: CommandLine.arguments.first ?? "") {
    AuthctlProgram.run()
}
await DaemonProgram.run()

/// The daemon's entry point.
enum DaemonProgram {
    /// What `@main` on the command would run. In an async function, where `main()` resolves to
    /// AsyncParsableCommand's: top-level code picks ParsableCommand's synchronous one, which
    /// refuses an asynchronous command.
    static func run() async {
        await AuthdCommand.main()
    }
}
