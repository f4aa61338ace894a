import MishapEngine

extension OpenAPISchemaCompiler {
    /// The operations of one path item (`/pets/{id}`: its `get`, `put`...), each with the
    /// item's parameters and its own (its own win when both name one).
    mutating func operations(template: String, item itemNode: YAMLNode) -> [OperationContract] {
        guard let resolved = dereferenced(itemNode) else { return [] }
        guard case .mapping(let item) = resolved else {
            error("a path item must be a mapping", at: itemNode)
            return []
        }
        let shared = item.member("parameters").map { parameters($0) } ?? []
        var operations: [OperationContract] = []
        for (keyNode, operationNode) in item.pairs {
            guard let key = keyNode.scalar?.string, OpenAPILoader.methods.contains(key) else { continue }
            guard case .mapping(let operation) = operationNode else {
                error("an operation must be a mapping", at: operationNode)
                continue
            }
            var all = shared
            for parameter in operation.member("parameters").map({ parameters($0) }) ?? [] {
                all.removeAll { $0.name == parameter.name && $0.location == parameter.location }
                all.append(parameter)
            }
            let body = operation.member("requestBody").flatMap { requestBody($0) }
            operations.append(OperationContract(method: key.uppercased(), template: template, parameters: all, body: body))
        }
        return operations
    }

    /// The parameters of a `parameters` list (cookie parameters are noted as not checked).
    private mutating func parameters(_ node: YAMLNode) -> [OperationContract.Parameter] {
        guard case .sequence(let list) = node else {
            error("parameters must be a list", at: node)
            return []
        }
        var found: [OperationContract.Parameter] = []
        for entry in list {
            guard let resolved = dereferenced(entry) else { continue }
            guard case .mapping(let parameter) = resolved else {
                error("a parameter must be a mapping", at: entry)
                continue
            }
            guard let name = parameter.member("name")?.scalar?.string, let placeNode = parameter.member("in"),
                  let place = placeNode.scalar?.string else {
                error("a parameter needs a 'name' and an 'in'", at: entry)
                continue
            }
            if place == "cookie" {
                noteUnchecked("cookie parameters", at: placeNode)
                continue
            }
            guard let location = OperationContract.Location(rawValue: place) else {
                error("'in' must be path, query, header or cookie; not '\(place)'", at: placeNode)
                continue
            }
            // OpenAPI says these header parameters are ignored: the body and the security
            // schemes describe them.
            if location == .header, ["accept", "content-type", "authorization"].contains(name.lowercased()) { continue }
            let required = location == .path || parameter.member("required")?.scalar.flatMap(YAMLScalar.boolean) == true
            var check = ValueCheck.anything
            if let schemaNode = parameter.member("schema") {
                check = schema(schemaNode)
            } else if let content = parameter.member("content") {
                noteUnchecked("parameters with content", at: content)
            }
            found.append(OperationContract.Parameter(location: location, name: name, required: required, check: check))
        }
        return found
    }

    /// An operation's `requestBody`: whether it is required, its media types and the schema of
    /// its JSON one (`application/json`, else the first `+json`).
    private mutating func requestBody(_ node: YAMLNode) -> OperationContract.Body? {
        guard let resolved = dereferenced(node) else { return nil }
        guard case .mapping(let body) = resolved else {
            error("requestBody must be a mapping", at: node)
            return nil
        }
        let required = body.member("required")?.scalar.flatMap(YAMLScalar.boolean) == true
        guard case .mapping(let content) = body.member("content") else {
            error("requestBody needs a 'content' mapping of media types", at: node)
            return nil
        }
        var mediaTypes: [String] = []
        var json: (type: String, node: YAMLNode)?
        for (typeNode, media) in content.pairs {
            guard let type = typeNode.scalar?.string.lowercased() else { continue }
            mediaTypes.append(type)
            let isJSON = type == "application/json" || type.hasSuffix("+json")
            guard isJSON, json == nil || type == "application/json", json?.type != "application/json" else { continue }
            if case .mapping(let fields) = media, let schemaNode = fields.member("schema") { json = (type, schemaNode) }
        }
        return OperationContract.Body(required: required, mediaTypes: mediaTypes, json: json.map { schema($0.node) })
    }
}
