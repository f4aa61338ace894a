/// Random text for tokens (`{{random.uuid}}`, `{{random.hex}}`), from the engine's random
/// source: seeded with `--seed`, a run repeats its tokens too.
enum RandomText {
    private static let digits = Array("0123456789abcdef".utf8)

    /// A version-4 UUID in lowercase: `3f2b8c1e-5d7a-4c9e-8b1f-0a6d2e4c7b9a`.
    static func uuid(_ random: RandomSource) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 { withUnsafeBytes(of: random.next()) { bytes.append(contentsOf: $0) } }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        var text: [UInt8] = []
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 { text.append(UInt8(ascii: "-")) }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `count` random lowercase hex digits.
    static func hex(digits count: Int, _ random: RandomSource) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(count)
        var bits: UInt64 = 0
        for index in 0..<count {
            if index % 16 == 0 { bits = random.next() }
            text.append(digits[Int(bits & 0x0F)])
            bits >>= 4
        }
        return String(decoding: text, as: UTF8.self)
    }
}
