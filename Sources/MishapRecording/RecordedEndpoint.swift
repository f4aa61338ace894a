import MishapEngine

/// What one recorded rule answers and when: the query it was recorded for, the upstream's
/// status, the headers kept, and the body as a file declares it.
public struct RecordedRule: Sendable {
    /// How a recorded body is written.
    public enum Body: Sendable, Equatable {
        /// No body at all.
        case empty
        /// Inline, as `text:` (small, valid UTF-8, no `{{`).
        case text(String)
        /// In a body file, by its path relative to the scenario file (`files/NAME`).
        case file(String)
    }

    /// The rule's name, unique within its endpoint.
    public var name: String
    /// The query it answers (none: every query).
    public var query: RecordedQuery
    /// The upstream's status.
    public var status: Int
    /// The headers declared, `Content-Type` among them when the upstream sent one.
    public var headers: [Field]
    public var body: Body
}

/// One endpoint of a recording (a method and an exact path) and the rules recorded for it, in
/// the order first match needs: rules testing more query parameters first, the rule for a
/// request without a query last, so every recorded request is answered by its own rule.
///
/// Kept as groups by the number of parameters tested, each in recording order, with the
/// queries and names in tables: adding a rule and finding one cost the same for the
/// thousandth rule as for the first (only `rules`, for writing the file, walks them all).
public struct RecordedEndpoint: Sendable {
    /// The method, upper case, as the request had it.
    public let method: String
    /// The exact path, percent-decoded, as the request had it.
    public let path: String
    /// Its scenario file's name without `.yaml`, unique within the recording.
    public let fileStem: String
    /// The rules by how many query parameters they test, each group in recording order.
    private var groups: [Int: [RecordedRule]] = [:]
    /// Where the rule of each query is: its group, and its place in it.
    private var places: [RecordedQuery: (group: Int, index: Int)] = [:]
    /// The names of its rules, in lower case (names are unique in any case).
    public private(set) var ruleNames: Set<String> = []

    /// An endpoint with no rules yet, written to `fileStem.yaml`.
    public init(method: String, path: String, fileStem: String) {
        self.method = method
        self.path = path
        self.fileStem = fileStem
    }

    /// The scenario file's name.
    public var fileName: String { fileStem + ".yaml" }

    /// `GET /v1/orders`: the endpoint as a scenario file declares it.
    public var declaration: String { "\(method) \(path)" }

    /// How many rules it has.
    public var count: Int { places.count }

    /// The rules in file order: more parameters tested first, then in recording order.
    public var rules: [RecordedRule] {
        groups.keys.sorted(by: >).flatMap { groups[$0] ?? [] }
    }

    /// The rule recorded for `query`, if any.
    public func rule(for query: RecordedQuery) -> RecordedRule? {
        places[query].flatMap { groups[$0.group]?[$0.index] }
    }

    /// Adds `rule` after every rule that tests as many query parameters or more, and before
    /// those that test fewer. A rule can only answer a query holding all it tests, so no rule
    /// above another can take a request recorded for the one below: one above tests more
    /// parameters than that request has, or as many but other ones.
    public mutating func insert(_ rule: RecordedRule) {
        let group = rule.query.parameters.count
        places[rule.query] = (group, groups[group]?.count ?? 0)
        groups[group, default: []].append(rule)
        ruleNames.insert(rule.name.lowercased())
    }

    /// The methods a scenario file's endpoint may name (not `ANY`, which is no request's).
    static let methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    /// The longest `endpoint:` value a scenario file takes (`FileCompiler.maximumEndpointLength`).
    static let maximumDeclarationLength = 4096

    /// Why requests with `method` and `path` cannot be an endpoint of a scenario file, or nil
    /// when they can: an endpoint names its path literally, so the path may hold no space (the
    /// separator of `endpoint:`), no `{` or `}` (a `{name}` segment captures), and no segment
    /// that is just `*` (which matches the rest).
    public static func problem(method: String, path: String) -> Unrecordable? {
        guard methods.contains(method) else {
            return Unrecordable("scenario files have no endpoint for the method \(method) (they take \(methods.sorted().joined(separator: ", ")))")
        }
        guard path.hasPrefix("/") else { return Unrecordable("its path does not start with '/'") }
        if path.contains(" ") { return Unrecordable("its path holds a space, which an endpoint declaration cannot") }
        if path.contains("{") || path.contains("}") {
            return Unrecordable("its path holds '{' or '}', which an endpoint reads as a path parameter")
        }
        if path.split(separator: "/", omittingEmptySubsequences: false).contains("*") {
            return Unrecordable("its path has a segment '*', which an endpoint reads as 'the rest of the path'")
        }
        guard method.utf8.count + 1 + path.utf8.count <= maximumDeclarationLength else {
            return Unrecordable("its path is longer than an endpoint declaration may be (\(maximumDeclarationLength) bytes)")
        }
        guard let pattern = PathPattern(path), pattern.isLiteral else {
            return Unrecordable("its path cannot be written as an endpoint's")
        }
        return nil
    }
}
