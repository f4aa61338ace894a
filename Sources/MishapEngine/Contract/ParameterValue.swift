/// A parameter's text as the JSON value its schema is checked against: a query, path or
/// header value is text, so `?limit=5` is the number 5 for a schema of integers, `true` a
/// boolean for one of booleans, and an array's items are the repeated query values
/// (`?tag=a&tag=b`, OpenAPI's default `form` style) or a path or header value split at commas.
enum ParameterValue {
    static func value(of texts: [String], location: OperationContract.Location, for check: ValueCheck) -> JSONValue {
        let types = check.keywords.types ?? []
        if types.contains(.array) {
            let items = location == .query && texts.count > 1 ? texts : texts.flatMap { $0.split(separator: ",").map(String.init) }
            let itemCheck = check.keywords.items ?? ValueCheck.anything
            return .array(items.map { scalar($0, for: itemCheck.keywords.types ?? []) })
        }
        return scalar(texts[0], for: types)
    }

    /// One text as a number, a boolean or null when the types allow it and it reads as one;
    /// else a string.
    static func scalar(_ text: String, for types: ValueCheck.Types) -> JSONValue {
        if !types.isDisjoint(with: [.number, .integer]), let number = JSONValue.parse(Array(text.utf8)), case .number = number {
            return number
        }
        if types.contains(.boolean), text == "true" || text == "false" { return .bool(text == "true") }
        if types.contains(.null), text == "null" || text.isEmpty { return .null }
        return .string(text)
    }
}
