/// Text written as a YAML double-quoted scalar, the one style every value in a recorded file
/// is written in: it reads back as exactly the text, whatever the text holds, so no value
/// depends on YAML's rules for plain scalars (`yes`, `1.0`, `~`, `: ` and `#` inside, leading
/// spaces...).
///
/// JSON's string escaping (`JSONEscaping`) is nearly this, but not quite: YAML does not allow
/// C1 control characters (U+0080 to U+009F), U+FEFF, U+FFFE and U+FFFF written as they are,
/// and reads U+0085, U+2028 and U+2029 as line breaks, which a double-quoted scalar folds into
/// spaces. Those are escaped here too; every escape used (`\"`, `\\`, `\n`, `\r`, `\t`, `\x`
/// with two hex digits, `\u` with four) is one YAML and libyaml read.
public enum YAMLQuoting {
    private static let hex = Array("0123456789ABCDEF".utf8)

    /// `text` as a double-quoted YAML scalar, quotes included.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            let value = scalar.value
            switch value {
            case 0x22: out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case 0x5C: out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20, 0x7F...0x9F:
                out += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(value >> 4)], hex[Int(value & 0xF)]]
            case 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF:
                out += [UInt8(ascii: "\\"), UInt8(ascii: "u")]
                for shift in stride(from: 12, through: 0, by: -4) { out.append(hex[Int((value >> UInt32(shift)) & 0xF)]) }
            default:
                UTF8.encode(scalar) { out.append($0) }
            }
        }
        out.append(UInt8(ascii: "\""))
        return String(decoding: out, as: UTF8.self)
    }
}
