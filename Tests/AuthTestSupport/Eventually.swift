/// Whether `condition` comes true within `seconds` of real time, looked at every `interval`.
///
/// For what a test cannot be told of directly (a process writing a file, a server counting a
/// request done): the bound only ends a failing test, generous so that a loaded machine never
/// reaches it, and a passing test goes on at the first look that finds the condition true. The
/// condition runs in the caller's isolation, so it may read the caller's state.
public func eventually(within seconds: Double = 30, every interval: Duration = .milliseconds(10),
                       isolation: isolated (any Actor)? = #isolation,
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
    while true {
        if try await condition() { return true }
        guard ContinuousClock.now < deadline else { return false }
        // A cancelled test stops looking at once: its outcome no longer matters.
        guard (try? await Task.sleep(for: interval)) != nil else { return try await condition() }
    }
}
