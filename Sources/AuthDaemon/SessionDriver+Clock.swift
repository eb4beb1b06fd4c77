import AuthCore
import FoundationEssentials

/// The wall clock watched against the monotonic one: a jump is fed to the machine at once.
extension SessionDriver {
    /// Compares the wall clock with the monotonic one; after a jump (the clock was set, NTP
    /// stepped it) the machine re-evaluates at once, so a jump past expiry refreshes now rather
    /// than whenever the old timer would have fired, and a backward jump moves the session's
    /// dates with the clock. Called every few seconds by `watchClock`.
    public func checkClock() {
        let now = ClockReading(clock, monotonic)
        let jump = now.jump(since: lastClockCheck)
        lastClockCheck = now
        guard jump.isJump() else {
            // Nothing the machine must see: the published copy is good as of this check.
            published.withLock { $0?.at = now }
            return
        }
        logger.notice("the wall clock jumped; re-evaluating the session", metadata: ["clock.offset_seconds": "\(Int64(saturating: jump.offset))"])
        apply(machine.clockJumped(by: jump.offset, now: now.wall))
        // Stamped with this check, the published machine is served on the event loop again.
        publish()
    }

    func watchClock() async {
        while !Task.isCancelled {
            try? await monotonic.sleep(for: 5)
            checkClock()
        }
    }
}
