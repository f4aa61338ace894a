import MishapSupport

/// The operations of an API description (`mishap serve --openapi FILE`), compiled once when it
/// loads: a request whose method and path one of them describes is checked against its
/// parameters and JSON body before the rules see it, and answered 400 with every problem when
/// it does not fit. Requests no operation describes are left to the rules.
public final class RequestContract: Sendable {
    /// Where the description was read from, for messages.
    public let source: String
    /// The path of `servers[0].url` (`/v1`), which requests carry before the operations'
    /// paths; empty for none.
    public let basePath: String
    /// The operations by method, those with more literal segments first.
    let operations: [String: [OperationContract]]
    /// How many operations there are.
    public let operationCount: Int

    public init(source: String, basePath: String, operations: [OperationContract]) {
        self.source = source
        let trimmed = basePath.hasSuffix("/") ? String(basePath.dropLast()) : basePath
        self.basePath = trimmed
        var byMethod: [String: [OperationContract]] = [:]
        for operation in operations { byMethod[operation.method, default: []].append(operation) }
        for method in byMethod.keys { byMethod[method]!.sort { $0.literalCount > $1.literalCount } }
        self.operations = byMethod
        operationCount = operations.count
    }

    /// The operation describing `request` and the values of its path parameters; nil when none does.
    public func operation(for request: Request) -> (operation: OperationContract, pathValues: [(String, String)])? {
        guard let candidates = operations[request.method] else { return nil }
        var path = Substring(request.path)
        if !basePath.isEmpty {
            guard path.hasPrefix(basePath) else { return nil }
            path = path.dropFirst(basePath.count)
            guard path.isEmpty || path.hasPrefix("/") else { return nil }
        }
        let pieces = path.split(separator: "/")
        for candidate in candidates {
            if let values = candidate.pathValues(pieces) { return (candidate, values) }
        }
        return nil
    }

    /// The problems of `request` against its operation (named `GET /pets/{id}`): nil when no
    /// operation describes it, none listed when it fits.
    public func problems(for request: Request) -> (operation: String, problems: ContractProblems)? {
        guard let (operation, pathValues) = operation(for: request) else { return nil }
        var problems = ContractProblems()
        for parameter in operation.parameters {
            let place = "\(parameter.location.rawValue) \(parameter.name)"
            let texts: [String]
            switch parameter.location {
            case .path: texts = pathValues.filter { $0.0 == parameter.name }.map(\.1)
            case .query: texts = request.query.filter { $0.name == parameter.name }.map(\.value)
            case .header:
                texts = request.headers.filter { $0.name.equalsIgnoringASCIICase(parameter.name) }.map(\.value)
            }
            guard !texts.isEmpty else {
                if parameter.required { problems.add(place, "required") }
                continue
            }
            parameter.check.check(ParameterValue.value(of: texts, location: parameter.location, for: parameter.check),
                                  at: place, into: &problems)
        }
        if let body = operation.body { check(body, of: request, into: &problems) }
        return (operation.name, problems)
    }

    /// The body's problems: missing when required, a media type not declared, JSON that does
    /// not parse or does not fit its schema.
    private func check(_ body: OperationContract.Body, of request: Request, into problems: inout ContractProblems) {
        let place = ContractProblems.bodyPlace
        guard !request.body.isEmpty else {
            if body.required { problems.add(place, "required") }
            return
        }
        let mediaType = request.headerValue("Content-Type").map(Self.mediaType) ?? ""
        let isJSON = mediaType == "application/json" || mediaType.hasSuffix("+json") || mediaType.isEmpty
        let declared = body.mediaTypes.contains { declared in
            declared == mediaType || declared == "*/*"
                || (declared.hasSuffix("/*") && mediaType.hasPrefix(declared.dropLast()))
        }
        if !declared && !(isJSON && body.json != nil) {
            problems.add(place, "Content-Type \(mediaType.isEmpty ? "(none)" : mediaType) is not one the operation accepts ("
                + body.mediaTypes.joined(separator: ", ") + ")")
            return
        }
        guard isJSON, let check = body.json else { return }
        guard let value = JSONValue.parse(request.body) else {
            problems.add(place, "not valid JSON")
            return
        }
        check.check(value, at: place, into: &problems)
    }

    /// `application/json` of `Application/JSON; charset=utf-8`.
    static func mediaType(_ header: String) -> String {
        String(header.prefix { $0 != ";" }.trimmingASCIIWhitespace()).lowercased()
    }
}
