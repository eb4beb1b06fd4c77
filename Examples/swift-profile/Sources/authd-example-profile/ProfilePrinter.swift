// Prints the signed-in user's profile from Supabase (GET /auth/v1/user with authd's token), and
// again whenever authd reports USER_UPDATED. The app never sees a refresh token.
//
//   SUPABASE_ANON_KEY=<anon key> authd-example-profile [PROFILE]
import AuthdClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@main
struct ProfilePrinter {
    static func main() async {
        let profile = CommandLine.arguments.dropFirst().first
        guard let anonKey = ProcessInfo.processInfo.environment["SUPABASE_ANON_KEY"], !anonKey.isEmpty else {
            fail("set SUPABASE_ANON_KEY to the project's anon (publishable) key")
        }
        do {
            let client = try await AuthdClient.connect(profile: profile)
            try await printProfile(client, anonKey: anonKey)
            for try await event in client.events() where event.kind == .userUpdated {
                try await printProfile(client, anonKey: anonKey)
            }
        } catch let error as AuthdError {
            fail(error.localizedDescription)
        } catch {
            fail("\(error)")
        }
    }

    /// Fetches the user with a fresh token and prints one line.
    static func printProfile(_ client: AuthdClient, anonKey: String) async throws {
        let token = try await client.token(minValidity: 30)
        let server = try await client.status().server
        var request = URLRequest(url: URL(string: server + "/auth/v1/user")!)
        request.setValue(token.authorizationHeader, forHTTPHeaderField: "Authorization")
        request.setValue(anonKey, forHTTPHeaderField: "apikey")
        let (body, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200,
              let user = try JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            fail("GET /auth/v1/user answered \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        let metadata = try JSONSerialization.data(withJSONObject: user["user_metadata"] ?? [:], options: [.sortedKeys])
        let line = "user \(user["email"] as? String ?? "-") id=\(user["id"] as? String ?? "-") metadata=\(String(decoding: metadata, as: UTF8.self))\n"
        // Straight to the descriptor, so a pipe reader sees each line at once.
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("authd-example-profile: \(message)\n".utf8))
        exit(1)
    }
}
