import MishapSupport

/// An IP address literal as the bytes a certificate's subject alternative name holds.
enum IPAddressBytes {
    /// 4 bytes for IPv4, 16 for IPv6; nil for anything that is not an address literal.
    static func parse(_ text: String) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &bytes) == 1 { return Array(bytes[..<4]) }
        if inet_pton(AF_INET6, text, &bytes) == 1 { return bytes }
        return nil
    }
}
