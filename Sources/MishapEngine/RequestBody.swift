/// A request body read as fields: a JSON document, a form, nothing, or something malformed.
enum RequestBody: Sendable {
    case empty
    case json(JSONValue)
    case form([Field])
    /// A non-empty body that is neither a form nor valid JSON.
    case malformed

    /// Reads `request`'s body: `application/x-www-form-urlencoded` as a form, anything else
    /// non-empty as JSON.
    init(of request: Request) {
        if request.body.isEmpty {
            self = .empty
        } else if let type = request.headerValue("Content-Type"), Self.isForm(type) {
            self = .form(FormDecoding.fields(request.body))
        } else if let json = JSONValue.parse(request.body) {
            self = .json(json)
        } else {
            self = .malformed
        }
    }

    /// Whether a `Content-Type` names a form; media types compare without regard to case.
    static func isForm(_ contentType: String) -> Bool {
        let form = "application/x-www-form-urlencoded".utf8
        var bytes = contentType.utf8[...]
        while let first = bytes.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { bytes = bytes.dropFirst() }
        guard bytes.count >= form.count else { return false }
        guard zip(bytes, form).allSatisfy({ $0.equalsIgnoringASCIICase($1) }) else { return false }
        // After the media type: nothing, parameters, or white space before them.
        guard let next = bytes.dropFirst(form.count).first else { return true }
        return next == UInt8(ascii: ";") || next == UInt8(ascii: " ") || next == UInt8(ascii: "\t")
    }

    func value(at path: [String]) -> String? {
        switch self {
        case .empty, .malformed: return nil
        case .json(let root): return root.value(at: path[...])?.text
        case .form(let fields):
            let name = path.joined(separator: ".")
            return fields.first(where: { $0.name == name })?.value
        }
    }
}

/// Decodes `application/x-www-form-urlencoded` text.
enum FormDecoding {
    static func fields(_ bytes: [UInt8]) -> [Field] {
        bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            return Field(decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// Percent-decodes and turns `+` into a space; malformed escapes are kept as written.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), i + 2 < bytes.endIndex,
                      let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 2
            } else {
                out.append(byte)
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
