import Foundation
import GoTrueDevServer
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A development server on 127.0.0.1 with a free port, for one test.
struct DevServerHarness {
    let server: DevHTTPServer
    var base: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// Runs `body` against a fresh server and stops the server afterwards, whatever happens.
    static func run(_ options: DevServerOptions = DevServerOptions(), _ body: (DevServerHarness) async throws -> Void) async throws {
        let harness = DevServerHarness(server: try await DevHTTPServer.start(api: DevAuthAPI(options: options), port: 0))
        do {
            try await body(harness)
        } catch {
            await harness.server.stop()
            throw error
        }
        await harness.server.stop()
    }

    /// One raw HTTP call; returns status, lower-cased headers and the JSON body (if any).
    func call(_ method: String, _ path: String, json: [String: Any]? = nil, headers: [String: String] = [:])
        async throws -> (status: Int, headers: [String: String], body: [String: Any]) {
        var request = URLRequest(url: URL(string: base.absoluteString + "/auth/v1" + path)!)
        request.httpMethod = method
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var lower: [String: String] = [:]
        for (key, value) in http.allHeaderFields { lower[(key as! String).lowercased()] = value as? String }
        let body = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return (http.statusCode, lower, body)
    }

    func signUp(_ email: String, _ password: String = "password-1") async throws -> [String: Any] {
        let answer = try await call("POST", "/signup", json: ["email": email, "password": password])
        precondition(answer.status == 200, "sign-up failed: \(answer.body)")
        return answer.body
    }

    func refresh(_ token: String, version: Bool = true) async throws -> (status: Int, headers: [String: String], body: [String: Any]) {
        try await call("POST", "/token?grant_type=refresh_token", json: ["refresh_token": token],
                       headers: version ? ["X-Supabase-Api-Version": "2024-01-01"] : [:])
    }
}
