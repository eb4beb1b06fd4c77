// swift-tools-version:6.1
import PackageDescription

// How the installed programs are linked in release builds (debug builds link the usual way):
// - the Swift runtime and FoundationEssentials linked inside (-static-stdlib), so that start-up binds no
//   Swift shared libraries and only the pages a program touches are mapped;
// - lld with packed relative relocations (DT_RELR, glibc 2.36+), so that the dynamic loader reads
//   a few dozen KiB of relocations instead of megabytes;
// - no dynamic symbol table for our own code (-static-stdlib turns on -export-dynamic, which
//   nothing here uses: no plugins are loaded and crash backtraces read the file's own symbols);
// - identical functions folded where that is safe (--icf=safe folds only functions whose object
//   file says their address is never compared; 24 KiB of authd).
// What this saves is measured by benchmarks P4 and P6 (docs/benchmarks.md).
let leanReleaseSwift: [SwiftSetting] = [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))]
let leanReleaseLinking: [LinkerSetting] = [.unsafeFlags([
    "-static-stdlib", "-use-ld=lld",
    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--no-export-dynamic", "-Xlinker", "--icf=safe",
    // Hardened as Debian links (lintian): relocations read-only and bound at load.
    "-Xlinker", "-z", "-Xlinker", "relro", "-Xlinker", "-z", "-Xlinker", "now",
], .when(configuration: .release))]

// The benchmarks' Swift hello-world goes further: one fully static executable (authctl's front,
// which it is measured against, is a static C program built by the Makefile). The dynamic loader,
// libc's and libstdc++'s relocations and symbol binding would be half of its start.
let staticReleaseSwift: [SwiftSetting] = [.unsafeFlags(["-static-executable"], .when(configuration: .release))]
let staticReleaseLinking: [LinkerSetting] = [.unsafeFlags(["-static-executable"], .when(configuration: .release))]

// Module graph (docs/architecture.md; scripts/check-module-graph reads it from this file): the
// pure core and the wire contract depend only on FoundationGaps; adapters (GoTrue HTTP, libsecret keyring, NIO socket server) implement the core's
// ports; the daemon wires ports together; authctl's commands and desktop apps see only the client
// library, which does not pull in SwiftNIO so that short-lived clients start fast.
// Only the daemon's side needs other packages. Each product of another package is used under the
// trait "Daemon", on by default; an app that wants only the client library depends on this
// package with `traits: []`, and SwiftPM then resolves, fetches and builds no other package.
let daemonTrait = "Daemon"

/// A product of another package, used only when the "Daemon" trait is on.
func external(_ product: String, _ package: String) -> Target.Dependency {
    .product(name: product, package: package, condition: .when(traits: [daemonTrait]))
}

let package = Package(
    name: "authd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "authd", targets: ["authd"]),
        .executable(name: "authd-dev-server", targets: ["authd-dev-server"]),
        .library(name: "AuthdClient", targets: ["AuthdClient"]),
    ],
    traits: [
        .trait(name: daemonTrait, description: "The daemon, authctl, the development server and the tests: everything but the AuthdClient library and the wire types it shares with the daemon."),
        .default(enabledTraits: [daemonTrait]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // SOCKS5 proxies (NIOSOCKS) for the HTTP adapter; nothing else of it is built.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        // What the product took from Foundation that FoundationEssentials lacks (string trimming,
        // an error's text, JSON of any shape), so that no module links Foundation and its ICU.
        .target(name: "FoundationGaps"),
        // Pure session rules and ports. FoundationEssentials only; never reads a clock.
        .target(name: "AuthCore", dependencies: ["FoundationGaps"]),
        // The wire contract: JSON-RPC envelope, methods, events, errors; and the client side of the
        // Unix-socket transport (paths, framing, a blocking POSIX connection) with the token lines'
        // hand-written codec, the hot path of benchmarks P1-P3.
        .target(name: "AuthProtocol", dependencies: ["FoundationGaps"]),
        // BlockingLane: a thread of its own for blocking calls (libsecret in the daemon, socket reads
        // in the client library), and Wakeup, a wait another thread can end. POSIX, no Foundation.
        .target(name: "BlockingCalls", dependencies: ["CMonotonicWait"]),
        // sem_clockwait on the monotonic clock (glibc declares it only for _GNU_SOURCE).
        .target(name: "CMonotonicWait"),
        // Whether a pidfd's process still runs (glibc's pidfd_send_signal, which Swift cannot see).
        .target(name: "CAuthdPeer"),
        // Server side of the transport on SwiftNIO: listener, line framing, peer credentials.
        .target(name: "AuthSocketServer", dependencies: [
            "AuthProtocol", "CAuthdPeer", "FoundationGaps",
            external("NIOCore", "swift-nio"),
            external("NIOPosix", "swift-nio"),
            external("Logging", "swift-log"),
            external("ServiceLifecycle", "swift-service-lifecycle"),
        ]),
        // HTTP adapter implementing AuthCore's GoTrueAPI port: one HTTP/1.1 exchange per request on
        // SwiftNIO (HTTPExchange), without async-http-client's pool, HTTP/2 and retries (docs/benchmarks.md).
        .target(name: "GoTrue", dependencies: [
            "FoundationGaps",
            "AuthCore",
            external("NIOCore", "swift-nio"),
            external("NIOPosix", "swift-nio"),
            external("NIOHTTP1", "swift-nio"),
            external("NIOSOCKS", "swift-nio-extras"),
            // TLS (and the handshake's end, from NIOTLS), the trust roots, and the certificate check.
            external("NIOTLS", "swift-nio"),
            external("NIOSSL", "swift-nio-ssl"),
        ]),
        // libsecret: the system library, a small C shim (the convenience API is variadic), the adapter.
        .systemLibrary(name: "CLibSecret", pkgConfig: "libsecret-1",
                       providers: [.apt(["libsecret-1-dev"])]),
        .target(name: "CAuthdSecret", dependencies: ["CLibSecret"]),
        .target(name: "Keyring", dependencies: ["AuthCore", "BlockingCalls", "CAuthdSecret"]),
        // libsystemd (sd-bus, sd-daemon) and the C watchers for resume (logind) and network (rtnetlink).
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        .target(name: "CAuthdSystem", dependencies: ["CSystemd"]),
        // config.toml: parsing with validation (file and line in every message) and the text edits
        // behind `authctl profile`, on a reader of the TOML it uses (TOMLReader: TOMLKit links all of
        // Foundation). Shared by authd and authctl.
        .target(name: "AuthConfig", dependencies: ["AuthCore", "AuthProtocol", "FoundationGaps"]),
        // The daemon's parts, wired to ports only: session driver, method table, supervisor.
        .target(name: "AuthDaemon", dependencies: [
            "AuthCore", "AuthProtocol", "AuthSocketServer", "FoundationGaps",
            // The sign-in page's visits (the page, its gate and flow), served through SignInPage's
            // listener port: the server itself (SwiftNIO) is the program's to start.
            "SignInPage", "SignInPageDriver",
            external("Logging", "swift-log"),
            external("ServiceLifecycle", "swift-service-lifecycle"),
            // SHA-256 for PKCE challenges and nonces (already built for the development server),
            // and ES256 / RS256 to verify access tokens against the project's published keys.
            external("Crypto", "swift-crypto"),
            external("_CryptoExtras", "swift-crypto"),
        ]),
        // The daemon's ties to the system: wake signals, socket activation, sd_notify, the journal.
        .target(name: "SystemIntegration", dependencies: [
            "BlockingCalls", "FoundationGaps",
            "AuthCore", "CAuthdSystem", "CSystemd",
            external("Logging", "swift-log"),
        ]),
        // authd's own sign-in page: a pure function from a view model to an HTML document with its
        // stylesheet inside (no script, no resource to load). No dependency, not even Foundation.
        .target(name: "SignInPage"),
        // Between the page and its flow: a posted form read as the flow's action, the flow's
        // screen as the page to render. Pure, like both sides.
        .target(name: "SignInPageBridge", dependencies: ["AuthCore", "SignInPage"]),
        // One visit of the page: the gate, the flow and the page between the server's requests and
        // the GoTrue operations (a port). No NIO: the server is the program's to start.
        .target(name: "SignInPageDriver", dependencies: ["AuthCore", "SignInPage", "SignInPageBridge"]),
        // The page's HTTP server on 127.0.0.1 (SwiftNIO): the owner of each connection checked
        // after accept, one request per connection, limits; the gate and the flow answer.
        .target(name: "SignInPageServer", dependencies: [
            "BlockingCalls", "FoundationGaps", "SignInPage",
            external("NIOCore", "swift-nio"), external("NIOPosix", "swift-nio"), external("NIOHTTP1", "swift-nio"),
        ]),
        // The library desktop apps link.
        .target(name: "AuthdClient", dependencies: ["AuthProtocol", "BlockingCalls", "FoundationGaps"]),
        .executableTarget(name: "authd", dependencies: [
            "AuthctlCommands", "AuthConfig", "AuthCore", "AuthDaemon", "AuthProtocol", "AuthSocketServer", "FoundationGaps",
            "GoTrue", "Keyring", "SignInPageServer", "SystemIntegration",
            external("ArgumentParser", "swift-argument-parser"),
            external("Logging", "swift-log"),
            external("NIOCore", "swift-nio"),
            external("ServiceLifecycle", "swift-service-lifecycle"),
        ], swiftSettings: leanReleaseSwift, linkerSettings: leanReleaseLinking),
        // libqrencode, to draw a TOTP factor's otpauth:// URI as a QR code in the terminal for the
        // authenticator app to scan (`authctl mfa enroll`).
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // The whole command-line tool, run inside the authd executable (see Sources/authd/main.swift).
        .target(name: "AuthctlCommands", dependencies: [
            "AuthdClient", "AuthProtocol", "AuthConfig", "AuthCore", "CQRencode", "FoundationGaps",
            external("ArgumentParser", "swift-argument-parser"),
        ]),
        // A GoTrue-compatible development server: the embedded default and the e2e tests' server. Kept
        // with the tests: it is no part of the product, and nothing in Sources imports it.
        .target(name: "GoTrueDevServer", dependencies: [
            // The TOTP factor's QR code, drawn as GoTrue sends it (an SVG), scannable.
            "CQRencode",
            external("NIOCore", "swift-nio"),
            external("NIOPosix", "swift-nio"),
            external("NIOHTTP1", "swift-nio"),
            external("Crypto", "swift-crypto"),
            // RS256 signing keys, for projects with asymmetric JWTs.
            external("_CryptoExtras", "swift-crypto"),
            // HTTPS, for the tests of how authd meets certificates.
            external("NIOSSL", "swift-nio-ssl"),
        ], path: "Tests/GoTrueDevServer"),
        .executableTarget(name: "authd-dev-server", dependencies: [
            "GoTrueDevServer",
            external("ArgumentParser", "swift-argument-parser"),
        ], path: "Tests/authd-dev-server"),
        // Benchmarks/: the Swift hello-world that `authctl token` is measured against (scripts/bench),
        // fully static.
        .executableTarget(name: "authd-bench-hello", path: "Benchmarks/Hello",
                          swiftSettings: staticReleaseSwift, linkerSettings: staticReleaseLinking),
        // Benchmarks/: the Swift runtime and FoundationEssentials alone, linked the same way as authd: the
        // part of the daemon's idle memory (P4) that no change to authd's own code can remove.
        .executableTarget(name: "authd-bench-foundation-floor", path: "Benchmarks/FoundationFloor",
                          swiftSettings: leanReleaseSwift, linkerSettings: leanReleaseLinking),
        // Fakes shipped beside the real things.
        .target(name: "AuthTestSupport", dependencies: ["AuthCore", "AuthProtocol", "CAuthdSystem", "CSystemd", "FoundationGaps"],
                path: "Tests/AuthTestSupport"),
        // The request decoder and dispatcher under libFuzzer (scripts/fuzz builds it with
        // -sanitize=fuzzer -DFUZZING); in an ordinary build it replays corpus files.
        .executableTarget(name: "authd-fuzz", dependencies: [
            "AuthConfig", "AuthCore", "AuthDaemon", "AuthProtocol", "AuthSocketServer", "AuthTestSupport",
            external("Logging", "swift-log"),
        ], path: "Fuzz/RequestFuzzer", swiftSettings: [.unsafeFlags(["-parse-as-library"])]),

        .testTarget(name: "AuthConfigTests", dependencies: ["AuthConfig"]),
        .testTarget(name: "AuthCoreTests", dependencies: ["AuthCore", "AuthTestSupport", "FoundationGaps"]),
        .testTarget(name: "AuthProtocolTests", dependencies: ["AuthProtocol", "AuthTestSupport"],
                    resources: [.copy("Fixtures")]),
        .testTarget(name: "GoTrueDevServerTests", dependencies: [
            "GoTrueDevServer", "GoTrue", "AuthCore", "AuthTestSupport", "FoundationGaps", external("Crypto", "swift-crypto"),
            external("NIOCore", "swift-nio"), external("NIOPosix", "swift-nio"),
            external("NIOHTTP1", "swift-nio"), external("NIOSSL", "swift-nio-ssl"),
        ]),
        // The page's structure, escaping, and the stylesheet's hash in its CSP (SHA-256 from Crypto).
        .testTarget(name: "SignInPageTests", dependencies: ["SignInPage", external("Crypto", "swift-crypto")]),
        // Every form of every page the bridge shows means something to the flow (read from the rendered HTML).
        .testTarget(name: "SignInPageBridgeTests", dependencies: ["SignInPageBridge", "SignInPage", "AuthCore"]),
        // Whole visits of the page, as a browser makes them, with the operations faked.
        .testTarget(name: "SignInPageDriverTests", dependencies: ["SignInPageDriver", "SignInPage", "AuthCore"]),
        // The server over real TCP on 127.0.0.1: the owner check, limits, a slow client.
        .testTarget(name: "SignInPageServerTests", dependencies: [
            "SignInPageServer", "SignInPage", "BlockingCalls", external("NIOCore", "swift-nio"), external("NIOPosix", "swift-nio"),
        ]),
        .testTarget(name: "AuthdClientTests", dependencies: ["AuthdClient", "BlockingCalls"]),
        .testTarget(name: "KeyringTests", dependencies: ["Keyring", "AuthCore", "AuthTestSupport"]),
        .testTarget(name: "AuthDaemonTests", dependencies: [
            "AuthDaemon", "AuthdClient", "AuthTestSupport", "AuthCore", "AuthProtocol", "AuthSocketServer",
            // The sign-in page served for real, on 127.0.0.1, by interactive sign-ins, and a
            // browser's requests to it over real TCP.
            "SignInPage", "SignInPageServer", external("NIOPosix", "swift-nio"),
            external("Logging", "swift-log"),
            external("NIOCore", "swift-nio"),
            external("NIOEmbedded", "swift-nio"),
            external("ServiceLifecycle", "swift-service-lifecycle"),
            external("Crypto", "swift-crypto"),
            external("_CryptoExtras", "swift-crypto"),
        ]),
        .testTarget(name: "SystemIntegrationTests", dependencies: [
            "SystemIntegration", "AuthCore", "AuthTestSupport", external("Logging", "swift-log"),
        ]),
        .testTarget(name: "EndToEndTests", dependencies: ["AuthProtocol", "AuthdClient", "AuthTestSupport", "CSystemd",
                                                          // HMAC-SHA1, for the TOTP codes an authenticator app would show.
                                                          external("Crypto", "swift-crypto")],
                    exclude: ["Helpers"]),
    ]
)
