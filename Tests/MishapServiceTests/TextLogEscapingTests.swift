@testable import MishapService
import MishapTestSupport
import Testing

/// The word-at-a-time test of whether a log field needs escaping agrees with the plain byte
/// rule on every kind of byte, in every position of a word, and across word boundaries.
@Suite struct TextLogEscapingTests {
    /// The rule as written for one byte at a time: control characters, the backslash, DEL, and
    /// U+2028 or U+2029 (E2 80 A8, E2 80 A9).
    static func needsEscapingByteByByte(_ bytes: [UInt8]) -> Bool {
        for (index, byte) in bytes.enumerated() {
            if byte < 0x20 || byte == 0x5C || byte == 0x7F { return true }
            if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 {
                return true
            }
        }
        return false
    }

    static func needsEscaping(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { TextLogEscaping.needsEscaping($0) }
    }

    @Test func everyByteInEveryPlace() {
        for length in 1...19 {
            for place in 0..<length {
                for byte in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[place] = UInt8(byte)
                    #expect(Self.needsEscaping(bytes) == Self.needsEscapingByteByByte(bytes), "\(bytes)")
                }
            }
        }
    }

    @Test func lineSeparatorsAcrossWords() {
        for length in 3...20 {
            for place in 0...(length - 3) {
                for last: UInt8 in [0xA8, 0xA9, 0xA7, 0xAA] {
                    var bytes = [UInt8](repeating: UInt8(ascii: "/"), count: length)
                    bytes[place] = 0xE2; bytes[place + 1] = 0x80; bytes[place + 2] = last
                    #expect(Self.needsEscaping(bytes) == (last == 0xA8 || last == 0xA9), "\(bytes)")
                }
            }
        }
        #expect(!Self.needsEscaping([0xE2, 0x80]), "cut short, it is not a separator")
    }

    @Test func seededRandomFields() {
        var random = SeededRandom(seed: 7)
        let alphabet: [UInt8] = Array("/api/users?é ".utf8) + [0x00, 0x0A, 0x0D, 0x09, 0x5C, 0x7F, 0xE2, 0x80, 0xA8, 0xA9, 0xC3, 0xFF]
        for _ in 0..<20_000 {
            let bytes = (0..<Int(random.next() % 40)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            #expect(Self.needsEscaping(bytes) == Self.needsEscapingByteByByte(bytes), "\(bytes)")
        }
    }
}
