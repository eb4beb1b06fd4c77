import AuthTestSupport
import AuthdClient
import AuthProtocol
import Foundation

/// A development server plus an authd on a private socket, and an authctl runner, for one test.
/// Every line any of them prints is kept for the secret scan.
final class Stack: @unchecked Sendable {
    // Unchecked: used from one test at a time.
    let directory: URL
    let profile: String
    let socketPath: String
    private(set) var devServer: Spawned?
    private(set) var daemons: [Spawned] = []
    private(set) var serverURL = ""
    private(set) var transcript: [String] = []
    var daemonEnvironmentOverrides: [String: String] = [:]

    /// Runs `body` off the cooperative pool, within the bound on tests that start processes
    /// (`ProcessTestSlots`), against a fresh stack whose development server is already up; the
    /// stack is torn down afterwards, whatever happens.
    static func running(_ name: String, lifetime: Int, _ body: @escaping @Sendable (Stack) throws -> Void) async throws {
        try await withProcessSlot {
            let stack = try Stack(name: name)
            defer { stack.tearDown() }
            try stack.startDevServer(lifetime: lifetime)
            try body(stack)
        }
    }

    /// Starts `authctl watch` (with `arguments`) against this stack's daemon.
    func watch(_ arguments: [String] = [], name: String = "watch") throws -> Spawned {
        try Spawned(Binaries.path("authctl"), ["watch"] + arguments, environment: environment, in: directory, name: name)
    }

    init(name: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("authd-e2e-\(name)-\(UUID().uuidString.prefix(6))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        chmod(directory.path, 0o700)
        profile = "e2e-\(name)-\(UUID().uuidString.prefix(6))"
        socketPath = directory.appendingPathComponent("run/authd.sock").path
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["AUTHD_SOCKET"] = socketPath
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        return environment
    }

    func startDevServer(lifetime: Int, port: Int = 0, extra: [String] = []) throws {
        let server = try Spawned(Binaries.path("authd-dev-server"), ["--port", String(port), "--access-token-lifetime", String(lifetime),
                                                                       "--anon-key", "e2e-anon-key"]
                                                                       + (SecretScan.secretsFile(for: profile).map { ["--record-secrets", $0] } ?? []) + extra,
                                 environment: environment, in: directory, name: "dev-server-\(UUID().uuidString.prefix(4))")
        guard server.waitForOutput({ $0.contains("listening on") }) else { throw StackError("dev server did not start: \(server.stderr)") }
        serverURL = String(server.stdout.split(separator: " ").last!.trimmingCharacters(in: .whitespacesAndNewlines))
        devServer = server
    }

    func stopDevServer() {
        devServer?.stop()
        if let devServer { transcript += [devServer.stdout, devServer.stderr] }
        devServer = nil
    }

    @discardableResult
    func startDaemon(extra: [String] = []) throws -> Spawned {
        var environment = self.environment
        environment.merge(daemonEnvironmentOverrides) { _, new in new }
        let daemon = try Spawned(Binaries.path("authd"), ["--profile", profile, "--url", serverURL, "--anon-key", "e2e-anon-key",
                                                          "--log-level", "trace"] + extra,
                                 environment: environment, in: directory, name: "authd-\(daemons.count)")
        daemons.append(daemon)
        // Asked in-process rather than with `authctl status`: starting a process can itself take
        // many seconds on a loaded CI machine, and that is not what this wait is about.
        let deadline = Date().addingTimeInterval(30)
        var lastAnswer = "no attempt"
        while Date() < deadline {
            lastAnswer = answersHello()
            if lastAnswer.isEmpty { return daemon }
            if !daemon.process.isRunning { throw StackError("authd exited: \(daemon.stderr)") }
            usleep(50_000)
        }
        throw StackError("authd did not answer hello within 30 s (last try: \(lastAnswer)): \(daemon.stderr)")
    }

    /// "" when the daemon on this stack's socket answers `hello`, else why not.
    private func answersHello() -> String {
        do {
            let connection = try AuthdConnection.connect(socketPath: socketPath)
            defer { connection.close() }
            _ = try connection.call(Methods.Hello.self, .init(client: "e2e-stack"), timeout: 5)
            return ""
        } catch {
            return "\(error)"
        }
    }

    /// Signs a user up at the development server, starts the daemon and signs in with authctl.
    @discardableResult
    func startSignedIn(email: String, password: String, daemonArguments: [String] = []) throws -> Spawned {
        try signUp(email: email, password: password)
        let daemon = try startDaemon(extra: daemonArguments)
        let login = try authctl(["login", "--email", email, "--password-stdin"], input: password + "\n")
        guard login.status == 0 else { throw StackError("login failed (\(login.status)): \(login.stderr)") }
        return daemon
    }

    func authctl(_ arguments: [String], input: String? = nil, timeout: TimeInterval = 60,
                 environment: [String: String]? = nil) throws -> Completed {
        let result = try runCommand(Binaries.path("authctl"), arguments, environment: environment ?? self.environment, input: input, timeout: timeout)
        transcript += [result.stdout, result.stderr]
        return result
    }

    /// Signs a user up with curl; the body (with the password) goes through its standard input,
    /// never its command line.
    func signUp(email: String, password: String) throws {
        let body = #"{"email":"\#(email)","password":"\#(password)"}"#
        let result = try runCommand("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "\(serverURL)/auth/v1/signup",
                                                      "-H", "Content-Type: application/json", "-H", "apikey: e2e-anon-key", "--data-binary", "@-"],
                                    environment: environment, input: body)
        guard result.stdout == "200" else { throw StackError("sign-up failed: \(result.stdout) \(result.stderr)") }
    }

    /// How many refresh grants the development server has answered (its `/admin/dev/stats`).
    func refreshGrants() throws -> Int {
        let result = try runCommand("/usr/bin/curl", ["-sS", "\(serverURL)/auth/v1/admin/dev/stats"], environment: environment)
        let stats = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        guard let count = stats?["refresh_grants"] as? Int else { throw StackError("no stats: \(result.stdout) \(result.stderr)") }
        return count
    }

    /// Makes the development server fail refresh grants as `fault` describes (see DevFault).
    func injectRefreshFault(_ fault: String) throws {
        let result = try runCommand("/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
                                                      "\(serverURL)/auth/v1/admin/dev/faults", "-d", fault], environment: environment)
        guard result.stdout == "204" else { throw StackError("fault not accepted: \(result.stdout) \(result.stderr)") }
    }

    /// Lets refresh grants succeed again.
    func clearRefreshFault() throws {
        _ = try runCommand("/usr/bin/curl", ["-sS", "-X", "DELETE", "\(serverURL)/auth/v1/admin/dev/faults"], environment: environment)
    }

    /// Runs a bash `script` on a D-Bus session and gnome-keyring of its own (scripts/with-private-keyring),
    /// for tests that lock, kill or restart the keyring without touching the suite's. `arguments`
    /// become `$1…`; with `activation` off, a killed keyring stays dead until the script starts it.
    /// The script is run from a file in the stack's directory, not with `bash -c`: it may hold a
    /// password, and the secret scan fails on one on any command line.
    func runOnOwnKeyring(_ script: String, arguments: [String], activation: Bool = true, timeout: TimeInterval = 90) throws -> Completed {
        var environment = self.environment
        environment["AUTHD_PRIVATE_BUS_STARTED"] = nil
        if !activation { environment["AUTHD_PRIVATE_BUS_NO_ACTIVATION"] = "1" }
        let scriptFile = try file("own-keyring-\(UUID().uuidString.prefix(6)).sh", contents: script)
        let result = try runCommand(Binaries.repositoryRoot.appendingPathComponent("scripts/with-private-keyring").path,
                                    ["bash", scriptFile] + arguments, environment: environment, timeout: timeout)
        transcript += [result.stdout, result.stderr]
        return result
    }

    /// The text of a file in the stack's directory, or "" when there is none.
    func file(_ name: String) -> String {
        (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
    }

    /// `authctl status --json`, parsed.
    func statusJSON() throws -> [String: Any] {
        let result = try authctl(["status", "--json"])
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// The event names a `watch --json` process has printed so far.
    static func events(_ watcher: Spawned) -> [[String: Any]] {
        watcher.stdout.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// Everything printed so far, by every process.
    func allOutput() -> String {
        (transcript + daemons.flatMap { [$0.stdout, $0.stderr] } + [devServer?.stdout ?? "", devServer?.stderr ?? ""]).joined(separator: "\n")
    }

    func tearDown() {
        for daemon in daemons { daemon.stop() }
        stopDevServer()
        try? FileManager.default.removeItem(at: directory)
    }
}

struct StackError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The claims of a JWT (no verification: the test only reads them).
func claims(of jwt: String) -> [String: Any] {
    let parts = jwt.split(separator: ".")
    guard parts.count == 3 else { return [:] }
    var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    guard let data = Data(base64Encoded: base64) else { return [:] }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
}
