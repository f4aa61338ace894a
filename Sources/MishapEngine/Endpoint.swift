/// A method and path with the rules that answer it, in order.
public struct Endpoint: Sendable {
    /// `GET`, `POST`, ... or `ANY`.
    public var method: String
    public var path: PathPattern
    /// First match wins.
    public let rules: [Rule]
    /// Where the endpoint was declared, for listings and logs.
    public var source: String?
    private let index: RuleIndex

    public init(method: String, path: PathPattern, rules: [Rule], source: String? = nil) {
        self.method = method
        self.path = path
        self.rules = rules
        self.source = source
        self.index = RuleIndex(rules)
    }

    /// The endpoint as written: `GET /isUserNameAvailable`.
    public var name: String { "\(method) \(path)" }

    /// The plan of the first rule that answers, or nil when every rule passes.
    ///
    /// A forced rule answers without its `when` and `chance` being tested; if its cycle step
    /// passes, the rules after it are tried as usual.
    func respond(_ context: inout MatchContext, forcing forced: Int? = nil, random: RandomSource) -> ResponsePlan? {
        var first = 0
        if let forced {
            if let plan = apply(rules[forced], &context, random) { return plan }
            first = forced + 1
        }
        guard first < rules.count else { return nil }
        for step in index.steps[index.stepOfRule[first]...] {
            switch step {
            case .rule(let candidate):
                guard candidate >= first, rules[candidate].matches(&context) else { continue }
                if let plan = attempt(rules[candidate], &context, random) { return plan }
            case .lookup(let source, let table):
                guard let value = context.value(of: source), let candidates = table[value] else { continue }
                for candidate in candidates where candidate >= first {
                    if let plan = attempt(rules[candidate], &context, random) { return plan }
                }
            }
        }
        return nil
    }

    /// A matching rule's response, unless its `chance` skips it or its cycle passes.
    private func attempt(_ rule: Rule, _ context: inout MatchContext, _ random: RandomSource) -> ResponsePlan? {
        if let chance = rule.chance, random.unit() >= chance { return nil }
        return apply(rule, &context, random)
    }

    /// The rule's response for this request, or nil when its cycle step passes.
    private func apply(_ rule: Rule, _ context: inout MatchContext, _ random: RandomSource) -> ResponsePlan? {
        let template: ResponseTemplate
        switch rule.action {
        case .respond(let response):
            template = response
        case .cycle(let steps, let counter):
            guard case .respond(let response) = steps[counter.next(length: steps.count, session: context.session, limit: context.maxSessions)] else {
                return nil
            }
            template = response
        }
        var plan = template.plan(context: &context, random: random)
        plan.endpoint = name
        plan.rule = rule.name
        return plan
    }
}
