// authctl's front: a small program without Foundation or ArgumentParser. It answers the common
// `authctl token` itself, because scripts and prompts run `$(authctl token)` many times and
// loading the full command-line tool would be most of its cost (benchmark P2); every other command,
// and every answer that is not a plain token, is handed to authctl-full by exec, in the same
// process, so output and exit codes are the full tool's.
#if canImport(Glibc)
import Glibc
#endif

let arguments = CommandLine.arguments
var answer: [UInt8]?
if let request = TokenRequest(arguments: Array(arguments.dropFirst())) {
    switch request.send() {
    case .printed: exit(0)
    case .answered(let line): answer = line
    case .noAnswer: break
    }
}
FullCommand.run(arguments, answer: answer)
