import Foundation
import Testing

/// The development server's admin endpoints, as the sign-in tests use them.
extension Stack {
    /// Signs `email` in at the development server as an app with its own Supabase client would,
    /// and returns the session as supabase-js stores it (the whole JSON) and its refresh token.
    /// Both tokens go to the secret scan.
    func appSession(email: String, password: String) throws -> (stored: String, refreshToken: String) {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["email": email, "password": password]), as: UTF8.self)
        let stored = try devPOST("/auth/v1/token?grant_type=password", body)
        guard let session = try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any],
              let refreshToken = session["refresh_token"] as? String, let accessToken = session["access_token"] as? String else {
            throw StackError("the password grant gave no session (its answer holds tokens, so it is not shown)")
        }
        SecretScan.record(secrets: [refreshToken, accessToken])
        return (stored, refreshToken)
    }

    /// POSTs `body` to the development server; fails unless it answers 2xx. Returns the body.
    /// The body goes through curl's standard input: it may hold a password, and a command line
    /// is readable by every user (the secret scan checks them).
    @discardableResult
    func devPOST(_ path: String, _ body: String) throws -> String {
        let result = try runCommand("/usr/bin/curl", ["-sS", "-w", "\n%{http_code}", "-X", "POST", "\(serverURL)\(path)",
                                                      "-H", "apikey: e2e-anon-key", "-H", "Content-Type: application/json", "--data-binary", "@-"],
                                    environment: environment, input: body)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard let status = lines.last.flatMap({ Int($0) }), (200..<300).contains(status) else {
            throw StackError("POST \(path) failed: \(result.stdout) \(result.stderr)")
        }
        return lines.dropLast().joined(separator: "\n")
    }

    /// `/admin/dev/stats`.
    func devStats() throws -> [String: Any] {
        let result = try runCommand("/usr/bin/curl", ["-sS", "\(serverURL)/auth/v1/admin/dev/stats"], environment: environment)
        return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// Switches email confirmation (the project's "Confirm email" setting).
    func setConfirmEmail(_ confirm: Bool) throws {
        try devPOST("/auth/v1/admin/dev/settings", #"{"mailer_autoconfirm":\#(!confirm)}"#)
    }

    /// The code of the newest message of `type` sent to `address`, from the outbox.
    func outboxCode(to address: String, type: String, channel: String = "email") throws -> String {
        let query = address.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? address
        let result = try runCommand("/usr/bin/curl", ["-sS", "\(serverURL)/auth/v1/admin/dev/outbox?to=\(query)"], environment: environment)
        let messages = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])?["messages"] as? [[String: Any]] ?? []
        guard let message = messages.last(where: { $0["type"] as? String == type && $0["channel"] as? String == channel }),
              let code = message["code"] as? String else {
            throw StackError("no \(type) message to \(address) in the outbox: \(result.stdout)")
        }
        SecretScan.record(secrets: [code])
        return code
    }

    /// An ID token from the development server's test issuer.
    func mintIDToken(provider: String, email: String, nonce: String? = nil, audience: String? = nil) throws -> String {
        var body: [String: Any] = ["provider": provider, "email": email]
        body["nonce"] = nonce
        body["aud"] = audience
        let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        let answer = try devPOST("/auth/v1/admin/dev/id_token", json)
        guard let token = (try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])?["id_token"] as? String else {
            throw StackError("no ID token: \(answer)")
        }
        SecretScan.record(secrets: [token])
        return token
    }

    /// Writes `contents` to a file in the stack's directory and returns its path.
    func file(_ name: String, contents: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        // O_CLOEXEC: a process another test forks meanwhile must not keep this file open for
        // writing, or executing it as a script fails with ETXTBSY ("Text file busy").
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw StackError("cannot write \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(contents.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw StackError("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return path
    }

    /// An executable shell script in the stack's directory.
    func script(_ name: String, _ body: String) throws -> String {
        let path = try file(name, contents: "#!/bin/sh\n" + body + "\n")
        chmod(path, 0o755)
        return path
    }

    /// Fails the test when any of `secrets` appears in anything the daemon, the development
    /// server, authctl's diagnostics or the `others` printed.
    func expectNoSecretPrinted(_ secrets: [String], besides others: [Spawned], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let printed = allOutput() + others.map { $0.stdout + $0.stderr }.joined(separator: "\n")
        for secret in secrets where !secret.isEmpty {
            #expect(!printed.contains(secret), "a secret leaked into the output", sourceLocation: sourceLocation)
        }
    }

    /// An access token from a password sign-in made with curl, as another app would: a session
    /// of its own, which authd does not hold.
    func passwordGrant(email: String, password: String) throws -> String {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["email": email, "password": password]), as: UTF8.self)
        let answer = try devPOST("/auth/v1/token?grant_type=password", body)
        guard let token = (try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any])?["access_token"] as? String else {
            throw StackError("no session from the password grant")
        }
        return token
    }

    /// POSTs `body` with `token` as Bearer (through a header file, never the command line) and
    /// returns the JSON object answered; fails unless the server answers 2xx.
    func bearerPOST(_ path: String, _ body: String, token: String) throws -> [String: Any] {
        let headers = try file("bearer-\(UUID().uuidString.prefix(6)).headers",
                               contents: "Authorization: Bearer \(token)\napikey: e2e-anon-key\nContent-Type: application/json\n")
        defer { try? FileManager.default.removeItem(atPath: headers) }
        let result = try runCommand("/usr/bin/curl", ["-sS", "-w", "\n%{http_code}", "-X", "POST", "\(serverURL)\(path)", "-H", "@\(headers)",
                                                      "--data-binary", "@-"], environment: environment, input: body)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard let status = lines.last.flatMap({ Int($0) }), (200..<300).contains(status),
              let object = try JSONSerialization.jsonObject(with: Data(lines.dropLast().joined(separator: "\n").utf8)) as? [String: Any] else {
            throw StackError("POST \(path) failed: \(result.stdout) \(result.stderr)")
        }
        return object
    }
}
