import CGnuTLS

/// What went wrong making, reading or writing a certificate or key, in words: the step, and
/// GnuTLS's own reason when it was GnuTLS that refused.
public struct TLSError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }

    /// Throws when a GnuTLS call returned an error code (negative), naming the step.
    static func check(_ code: Int32, _ step: @autoclosure () -> String) throws(TLSError) {
        guard code < 0 else { return }
        throw TLSError("\(step()): \(String(cString: gnutls_strerror(code)))")
    }
}
