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
