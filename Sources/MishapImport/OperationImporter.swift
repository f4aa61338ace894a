import MishapScenarios

/// Turns one operation into an endpoint: its success answer (the first 2xx response: its
/// example, or one made from its schema), every other declared response as a rule named after
/// the response (`notFound` for a `$ref` to `#/components/responses/NotFound`, else
/// `status404` with the status's usual name as an alias), the decoder variants of a JSON
/// success body, and the transport failures.
struct OperationImporter {
    let resolver: ReferenceResolver
    var generator: ExampleGenerator
    /// What was left out and why, for the summary: `GET /pets 200: external $ref 'x.yaml' not followed`.
    var notes: [String] = []

    init(resolver: ReferenceResolver) {
        self.resolver = resolver
        generator = ExampleGenerator(resolver: resolver)
    }

    /// An answer: its status, body, and the schema of a JSON body (for the decoder variants).
    private struct Answer {
        var status: Int
        var body: ImportedRule.Body
        var schema: JSONTree?
        var fromExample: Bool
        /// The declared response headers, with example values.
        var headers: [(name: String, value: String)] = []
    }

    /// The endpoint of `operation`, at `method` and `path`.
    mutating func endpoint(method: String, path: String, operation: JSONTree.Object) throws(ReferenceResolver.Problem) -> ImportedEndpoint {
        let declaration = "\(method) \(path)"
        var names = RuleNames()
        let responses = operation["responses"]?.object ?? JSONTree.Object()
        let successCode = responses.keys.first { $0.hasPrefix("2") }
        var rules: [ImportedRule] = []
        var errorRules = 0
        for member in responses.members where member.key != successCode && !member.key.hasPrefix("1") {
            let status = Self.status(of: member.key)
            guard let answer = try answer(member.value, status: status, place: "\(declaration) \(member.key)") else { continue }
            let reference = member.value["$ref"]?.string
            let statusName = member.key == "default" ? "default" : "status" + member.key
            // The usual name of an exact status (not of a range such as 4XX), or of `default`'s 500.
            let usual = Int(member.key) != nil || member.key == "default" ? RuleNames.statusNames[status] : nil
            let wanted = reference.map(ReferenceResolver.name(of:)) ?? (member.key == "default" ? "defaultError" : usual ?? statusName)
            let name = names.name(wanted)
            let aliases = names.aliases([statusName, usual].compactMap { $0 }.filter { $0 != name })
            let described = resolved(member.value)?["description"]?.string.map { ": \($0)" } ?? ""
            rules.append(ImportedRule(name: name, aliases: aliases,
                                      comment: "declared response \(member.key)\(described)",
                                      status: answer.status, body: answer.body, headers: answer.headers))
            errorRules += 1
        }
        var success = Answer(status: 200, body: .none, schema: nil, fromExample: false)
        if let successCode, let response = responses[successCode],
           let found = try answer(response, status: Self.status(of: successCode), place: "\(declaration) \(successCode)") {
            success = found
        } else if successCode == nil {
            notes.append("\(declaration): no 2xx response declared; the success answer is an empty 200")
        }
        var variants = 0
        if case .json(let body) = success.body, let schema = success.schema, body.object != nil || body.array != nil {
            for variant in try DecoderVariants.make(body: body, schema: schema, resolver: resolver) {
                let ruleBody: ImportedRule.Body
                switch variant.body {
                case .json(let tree): ruleBody = .json(tree)
                case .jsonText(let text): ruleBody = .text(text, contentType: "application/json; charset=utf-8")
                case .jsonBytes(let bytes): ruleBody = .base64(bytes, contentType: "application/json; charset=utf-8")
                }
                rules.append(ImportedRule(name: names.name(variant.name), comment: "decoder variant: \(variant.change)",
                                          status: success.status, body: ruleBody))
                variants += 1
            }
        }
        let about = [operation["operationId"]?.string, operation["summary"]?.string].compactMap { $0 }.joined(separator: ": ")
        rules.append(ImportedRule(name: names.name("success"),
                                  comment: "the success answer (\(successCode ?? "none declared")), \(success.fromExample ? "the description's example" : "made from its schema")",
                                  forcedOnly: false, status: success.status, body: success.body, headers: success.headers))
        let transport = TransportCatalogue.rules(success: success.status, body: success.body, names: &names)
        return ImportedEndpoint(declaration: declaration, about: about, rules: rules, transportFailures: transport,
                                exampleAnswer: success.fromExample, errorRules: errorRules, variantRules: variants)
    }

    /// `404` is 404, `4XX` 400, `default` 500.
    static func status(of code: String) -> Int {
        if let number = Int(code), (100...599).contains(number) { return number }
        if code.uppercased().hasSuffix("XX"), let first = code.first?.wholeNumberValue, (1...5).contains(first) { return first * 100 }
        return 500
    }

    /// The object a value or its `$ref` names, or nil.
    private func resolved(_ value: JSONTree) -> JSONTree.Object? {
        (try? resolver.resolve(value))?.value.object
    }

    /// A response's answer: JSON from the JSON media type's example (or one made from its
    /// schema), a text media type's string example as text, otherwise no body. nil (with a
    /// note) when the response cannot be read: an external `$ref`.
    private mutating func answer(_ response: JSONTree, status: Int, place: String) throws(ReferenceResolver.Problem) -> Answer? {
        let object: JSONTree.Object
        do {
            guard let found = try resolver.resolve(response).value.object else { return Answer(status: status, body: .none, schema: nil, fromExample: false) }
            object = found
        } catch .external(let reference) {
            notes.append("\(place): external $ref '\(reference)' not followed; the response is left out")
            return nil
        }
        var answer = try bodyAnswer(object, status: status, place: place)
        answer?.headers = try ResponseHeaders.values(object["headers"], resolver: resolver, generator: &generator)
        return answer
    }

    /// The body part of a response's answer (see `answer`).
    private mutating func bodyAnswer(_ object: JSONTree.Object, status: Int, place: String) throws(ReferenceResolver.Problem) -> Answer? {
        guard status != 204, status != 304, let content = object["content"]?.object, !content.isEmpty else {
            return Answer(status: status, body: .none, schema: nil, fromExample: false)
        }
        let json = content.keys.first { $0.hasPrefix("application/json") }
            ?? content.keys.first { $0.contains("json") } ?? content.keys.first { $0 == "*/*" }
        guard let mediaType = json ?? content.keys.first, let media = try resolver.resolve(content[mediaType] ?? .null).value.object else {
            return Answer(status: status, body: .none, schema: nil, fromExample: false)
        }
        var example = media["example"]
        if example == nil, let examples = media["examples"]?.object, let first = examples.members.first {
            do {
                example = try resolver.resolve(first.value).value["value"]
            } catch .external(let reference) {
                notes.append("\(place): external $ref '\(reference)' of an example not followed")
            }
        }
        let fromExample = example != nil
        if example == nil, let schema = media["schema"] {
            do {
                example = try generator.value(for: schema)
            } catch .external(let reference) {
                notes.append("\(place): external $ref '\(reference)' not followed; the body is left empty")
            }
        }
        guard let example else { return Answer(status: status, body: .none, schema: nil, fromExample: false) }
        if json != nil {
            return Answer(status: status, body: .json(example), schema: media["schema"], fromExample: fromExample)
        }
        if let text = example.string {
            return Answer(status: status, body: .text(text, contentType: mediaType), schema: nil, fromExample: fromExample)
        }
        notes.append("\(place): \(mediaType) body not written (only JSON, or text with a string example, is)")
        return Answer(status: status, body: .none, schema: nil, fromExample: false)
    }
}
