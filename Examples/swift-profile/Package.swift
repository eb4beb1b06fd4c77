// swift-tools-version:6.1
// An app outside authd, as a desktop app would be: it depends on authd for the AuthdClient
// library alone. With `traits: []` SwiftPM resolves and builds no other package (authd's own
// dependencies serve only the daemon's side, under its default trait "Daemon").
import PackageDescription

let package = Package(
    name: "authd-example-profile",
    platforms: [.macOS(.v14)],
    dependencies: [
        // An app names authd by its repository's URL, e.g.
        // .package(url: "https://github.com/<owner>/authd", branch: "main", traits: []);
        // this example, kept in authd's tree, names the checkout it sits in.
        .package(name: "authd", path: "../..", traits: []),
    ],
    targets: [
        .executableTarget(name: "authd-example-profile", dependencies: [.product(name: "AuthdClient", package: "authd")]),
    ]
)
