import AuthProtocol
import Testing

/// Which hosts may be reached over plain http.
@Suite struct LoopbackHostTests {
    @Test(arguments: ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "[::1]"])
    func thisMachineIsLoopback(_ host: String) {
        #expect(LoopbackHost.contains(host))
    }

    @Test(arguments: ["127.0.0.1.evil.example", "127.evil.example", "localhost.evil.example", "127.0.0.256", "127.0.0",
                      "127.0.0.1.", "128.0.0.1", "0.0.0.0", "::2", "example.com", "", "127.0.0.١"])
    func namesAndOtherAddressesAreNot(_ host: String) {
        #expect(!LoopbackHost.contains(host))
    }
}
