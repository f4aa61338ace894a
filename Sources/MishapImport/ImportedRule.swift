import MishapRecording
import MishapScenarios
import MishapSupport

/// One rule of an imported endpoint, before it is written: its name and aliases, a comment
/// saying where it comes from, whether it answers only when forced (`chance: 0`), and its
/// answer.
struct ImportedRule {
    var name: String
    var aliases: [String] = []
    var comment: String
    var forcedOnly = true
    var status: Int
    var body: Body = .none
    /// Response headers, as declared with example values.
    var headers: [(name: String, value: String)] = []
    /// Delivery keys written as they are (`fault: reset`, `hang: true`).
    var delivery: [String] = []

    /// The answer's body.
    enum Body {
        case none
        case json(JSONTree)
        /// JSON written with an anchor (`&name`), for later rules of the file to repeat.
        case anchoredJSON(JSONTree, anchor: String)
        /// The JSON of an anchor written above (`*name`).
        case aliasedJSON(anchor: String)
        case text(String, contentType: String?)
        case base64([UInt8], contentType: String)
    }

    /// The content type of a JSON body written as bytes.
    static let jsonContentType = "application/json; charset=utf-8"

    /// The body as Mishap sends it without placeholders: a `json` or `text` body holding `{{`
    /// would be read as a placeholder, so such a body is written as its bytes (`base64`), as
    /// the recorder writes a body it cannot inline.
    var literalBody: Body {
        switch body {
        case .json(let value), .anchoredJSON(let value, _):
            let text = value.jsonText
            return text.contains("{{") ? .base64(Array(text.utf8), contentType: Self.jsonContentType) : body
        case .text(let text, let contentType) where text.contains("{{"):
            return .base64(Array(text.utf8), contentType: contentType ?? "text/plain; charset=utf-8")
        default:
            return body
        }
    }

    /// The rule as lines of a list item indented `indent` spaces.
    func lines(indent: Int, flow: inout FlowYAML) -> [String] {
        let pad = String(repeating: " ", count: indent)
        var out = [pad + "# " + comment.replacingOccurrences(of: "\n", with: " ")]
        out.append(pad + "- name: " + YAMLQuoting.quoted(name))
        if !aliases.isEmpty { out.append(pad + "  aliases: [" + aliases.map(YAMLQuoting.quoted).joined(separator: ", ") + "]") }
        if forcedOnly { out.append(pad + "  chance: 0") }
        out.append(pad + "  respond:")
        let inner = pad + "    "
        if status != 200 || delivery.isEmpty { out.append(inner + "status: \(status)") }
        if !headers.isEmpty {
            out.append(inner + "headers: { " + headers.map { YAMLQuoting.quoted($0.name) + ": " + YAMLQuoting.quoted($0.value) }.joined(separator: ", ") + " }")
        }
        out += delivery.map { inner + $0 }
        let body = literalBody
        switch body {
        case .none: break
        case .json(let value), .anchoredJSON(let value, _):
            var rendered = flow.lines(value, indent: indent + 6)
            if case .anchoredJSON(_, let anchor) = body {
                rendered[0] = String(repeating: " ", count: indent + 6) + "&\(anchor) " + rendered[0].drop(while: { $0 == " " })
            }
            if rendered.count == 1 && rendered[0].count + 6 - 2 <= FlowYAML.width {
                out.append(inner + "json: " + rendered[0].drop(while: { $0 == " " }))
            } else {
                out.append(inner + "json:")
                out += rendered
            }
        case .aliasedJSON(let anchor):
            out.append(inner + "json: *\(anchor)")
        case .text(let text, let contentType):
            out.append(inner + "text: " + YAMLQuoting.quoted(text))
            if let contentType { out.append(inner + "contentType: " + YAMLQuoting.quoted(contentType)) }
        case .base64(let bytes, let contentType):
            out.append(inner + "base64: " + YAMLQuoting.quoted(Base64.encode(bytes)))
            out.append(inner + "contentType: " + YAMLQuoting.quoted(contentType))
        }
        return out
    }
}
