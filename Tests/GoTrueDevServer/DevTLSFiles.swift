import NIOSSL

/// The certificate chain and key the development server presents over HTTPS, as PEM files.
///
/// The files are read again for every connection, so that a test can swap the certificate while
/// the server (and its sessions) lives on: a captive portal that appears and goes away, a
/// certificate that expires.
public struct DevTLSFiles: Sendable {
    /// The certificate chain, leaf first.
    public var certificatePath: String
    /// The leaf's private key.
    public var privateKeyPath: String

    /// Names the two files.
    public init(certificatePath: String, privateKeyPath: String) {
        self.certificatePath = certificatePath
        self.privateKeyPath = privateKeyPath
    }

    /// A server context from the files as they are now.
    func context() throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certificatePath).map { NIOSSLCertificateSource.certificate($0) }
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain,
                                                                     privateKey: .privateKey(try NIOSSLPrivateKey(file: privateKeyPath, format: .pem)))
        return try NIOSSLContext(configuration: configuration)
    }
}
