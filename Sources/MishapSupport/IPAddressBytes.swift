#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address literal as its bytes (what a certificate's subject alternative name holds), and
/// back: `inet_pton` and `inet_ntop`.
public enum IPAddressBytes {
    /// 4 bytes for IPv4, 16 for IPv6; nil for anything that is not an address literal.
    public static func parse(_ text: String) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, text, &bytes) == 1 { return Array(bytes[..<4]) }
        if inet_pton(AF_INET6, text, &bytes) == 1 { return bytes }
        return nil
    }

    /// The text of 4 or 16 address bytes (`127.0.0.0`, `::1`); nil for another count.
    public static func text(_ bytes: [UInt8]) -> String? {
        let family: Int32
        switch bytes.count {
        case 4: family = AF_INET
        case 16: family = AF_INET6
        default: return nil
        }
        var buffer = [CChar](repeating: 0, count: 64)
        guard inet_ntop(family, bytes, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
