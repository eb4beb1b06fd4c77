import Foundation

#if FUZZING
/// libFuzzer's callback (built with `-sanitize=fuzzer -DFUZZING`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    RequestFuzzer.run(data.map { Data(bytes: $0, count: size) } ?? Data())
    return 0
}

/// libFuzzer's driver, which its own `main` would call.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// SwiftPM links an executable's `main` to `<module>_main`, so libFuzzer's `main` is never
/// used: this one starts libFuzzer's driver instead.
@_cdecl("authd_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}
#else
/// Without libFuzzer: replays the files and folders named on the command line (the seed corpus,
/// or a crash file) through the same checks, so every ordinary build can run them.
@main
struct ReplayCorpus {
    static func main() throws {
        var count = 0
        for argument in CommandLine.arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                FileHandle.standardError.write(Data("authd-fuzz: \(argument): no such file or folder\n".utf8))
                exit(64)
            }
            let files = isDirectory.boolValue
                ? try FileManager.default.contentsOfDirectory(atPath: argument).sorted().map { "\(argument)/\($0)" }
                : [argument]
            for file in files {
                RequestFuzzer.run(try Data(contentsOf: URL(fileURLWithPath: file)))
                count += 1
            }
        }
        print("authd-fuzz: \(count) inputs replayed through the decoder and dispatcher, all checks held")
    }
}
#endif
