import ArgumentParser
import MishapSupport
import MishapTLS

/// `mishap tls trust`: how to trust the authority everywhere an app under test runs, and the pin.
struct TLSTrust: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Print the steps to trust the local certificate authority, and the server key's SHA-256 pin.",
        discussion: """
            The steps for the booted iOS Simulator, macOS, an iPhone, Debian and Ubuntu, curl, \
            Python, Node.js and Android; what the authority may vouch for and until when; how to \
            remove it again; and the pin (sha256/ and the Base64 SHA-256 of the server key's \
            SubjectPublicKeyInfo: curl's --pinnedpubkey takes it as sha256// and the Base64 part). \
            Warns of a key file others can read and of an authority without name constraints. \
            Exits 1 when the folder holds no authority.
            """
    )

    @OptionGroup var folderOption: TLSFolderOption

    func run() throws {
        let folder = folderOption.folder
        let authority: CertificateAuthority
        let pin: String
        let fingerprint: String
        do throws(TLSError) {
            authority = try CertificateAuthority.open(directory: folder)
            pin = try authority.serverKey.spkiPin()
            fingerprint = try authority.certificate.sha1Fingerprint()
        } catch {
            printError("mishap: \(error)")
            throw ExitCode.failure
        }
        for warning in authority.warnings(now: WallClock.nowSeconds()) { printError("mishap: warning: \(warning)") }
        let scope = authority.certificate.nameConstraints.map { "it may vouch for \($0.description) only" }
            ?? "it may vouch for ANY name: made without name constraints, it should be replaced (above)"
        print(Self.steps(certificate: authority.path(CertificateAuthority.certificateFile), pin: pin, fingerprint: fingerprint,
                         scope: "\(scope), until \(CertificateAuthority.day(authority.certificate.notAfter))"))
    }

    /// The steps, for the certificate file `certificate` (whose SHA-1 is `fingerprint`, what it
    /// may vouch for and until when `scope`) and the server key's `pin`.
    static func steps(certificate: String, pin: String, fingerprint: String, scope: String) -> String {
        let quoted = "'" + certificate.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        return """
            Trust the local certificate authority \(certificate)
            (\(scope); names wanted later need a new authority, trusted anew):

            The booted iOS Simulator:
              xcrun simctl keychain booted add-root-cert \(quoted)

            macOS (this user's login keychain: Safari, and URLSession in Mac apps and tests):
              security add-trusted-cert -r trustRoot -k ~/Library/Keychains/login.keychain-db \(quoted)

            A physical iPhone: send it the file (AirDrop), install the profile in Settings > General >
            VPN & Device Management, then turn on full trust in Settings > General > About > Certificate
            Trust Settings; serve with --host 0.0.0.0 --tls-name <this machine's name on the network>.

            Debian and Ubuntu (the whole machine):
              sudo cp \(quoted) /usr/local/share/ca-certificates/mishap-local-ca.crt && sudo update-ca-certificates

            curl:
              curl --cacert \(quoted) https://localhost:8443/isUserNameAvailable?userName=someone

            Python (ssl, urllib, httpx; requests reads REQUESTS_CA_BUNDLE):
              SSL_CERT_FILE=\(quoted) python3 your_test.py

            Node.js:
              NODE_EXTRA_CA_CERTS=\(quoted) node your_test.js

            Android (a debug build): copy the file to res/raw/mishap_ca.pem, add
            res/xml/network_security_config.xml:
              <network-security-config>
                <debug-overrides>
                  <trust-anchors><certificates src="@raw/mishap_ca" /></trust-anchors>
                </debug-overrides>
              </network-security-config>
            and android:networkSecurityConfig="@xml/network_security_config" to the manifest's
            <application>. The emulator reaches this machine at 10.0.2.2: serve with --tls-name 10.0.2.2.

            The pin of the server key (SHA-256 of its SubjectPublicKeyInfo; it stays the same when
            serve issues a new certificate), for apps that pin:
              sha256/\(pin)

            To remove it (when done, or before trusting a new one):
              macOS:    security delete-certificate -t -Z \(fingerprint) ~/Library/Keychains/login.keychain-db
              Debian and Ubuntu:
                        sudo rm /usr/local/share/ca-certificates/mishap-local-ca.crt && sudo update-ca-certificates --fresh
              The booted iOS Simulator (every certificate added to it):
                        xcrun simctl keychain booted reset
              A physical iPhone: Settings > General > VPN & Device Management > the profile > Remove Profile.
              Android: remove res/raw/mishap_ca.pem and its trust-anchors entry from the debug build.
            """
    }
}
