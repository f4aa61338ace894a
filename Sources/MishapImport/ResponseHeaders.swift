import MishapScenarios

/// A response's declared headers (`Retry-After`, `Location`, `X-Rate-Limit-Remaining`) with
/// values to send: the header's example, its schema's, or one made from its schema. Headers the
/// server sets itself (`Content-Type`, `Content-Length`...) are left out, and so is a value
/// Mishap could not send as written (empty, a control character, `{{`, which would be read as
/// a placeholder) or a name that is not a token.
enum ResponseHeaders {
    /// Headers the server writes, whatever a rule says.
    static let serverHeaders: Set<String> = ["content-type", "content-length", "transfer-encoding", "date", "connection"]

    /// The headers of a response's `headers` map, in order.
    static func values(_ headers: JSONTree?, resolver: ReferenceResolver, generator: inout ExampleGenerator) throws(ReferenceResolver.Problem) -> [(name: String, value: String)] {
        guard let members = headers?.object?.members else { return [] }
        var values: [(name: String, value: String)] = []
        for member in members where !serverHeaders.contains(member.key.lowercased()) && isToken(member.key) {
            let header: JSONTree.Object
            do {
                guard let found = try resolver.resolve(member.value).value.object else { continue }
                header = found
            } catch .external {
                continue
            }
            var example = header["example"]
            if example == nil, let examples = header["examples"]?.object, let first = examples.members.first {
                example = try? resolver.resolve(first.value).value["value"]
            }
            if example == nil, let schema = header["schema"] { example = try generator.value(for: schema) }
            guard let text = example.flatMap(Self.text), !text.isEmpty, !text.contains("{{"),
                  !text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) else { continue }
            values.append((member.key, text))
        }
        return values
    }

    /// A scalar as header text; a list as its items joined with commas.
    private static func text(_ value: JSONTree) -> String? {
        switch value {
        case .string(let text): return text
        case .number(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .array(let items): return items.compactMap(text).joined(separator: ",")
        default: return nil
        }
    }

    /// Whether `name` is an HTTP token (RFC 9110): letters, digits and ``!#$%&'*+-.^_`|~``.
    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "!#$%&'*+-.^_`|~".unicodeScalars.contains($0)) }
    }
}
