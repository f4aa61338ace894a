/// A method and path with the rules that answer it, in order.
public struct Endpoint: Sendable {
    /// `GET`, `POST`, ... or `ANY`.
    public var method: String
    public var path: PathPattern
    /// First match wins.
    public var rules: [Rule]
    /// Where the endpoint was declared, for listings and logs.
    public var source: String?

    public init(method: String, path: PathPattern, rules: [Rule], source: String? = nil) {
        self.method = method
        self.path = path
        self.rules = rules
        self.source = source
    }

    /// The endpoint as written: `GET /isUserNameAvailable`.
    public var name: String { "\(method) \(path)" }

    /// The plan of the first rule that answers, or nil when every rule passes.
    func respond(_ context: inout MatchContext) -> ResponsePlan? {
        for rule in rules where rule.matches(&context) {
            let template: ResponseTemplate
            switch rule.action {
            case .respond(let response):
                template = response
            case .cycle(let steps, let counter):
                guard case .respond(let response) = steps[counter.next(length: steps.count)] else { continue }
                template = response
            }
            var plan = template.plan(context: &context)
            plan.endpoint = name
            plan.rule = rule.name
            return plan
        }
        return nil
    }
}
