/// A method and path with the rules that answer it, in order. A class (nothing in it changes
/// once made): handed from the engine's tables to the code that answers, an endpoint is one
/// reference count, where the struct it was cost a dozen for every request.
public final class Endpoint: Sendable {
    /// `GET`, `POST`, ... or `ANY`.
    public let method: String
    public let path: PathPattern
    /// First match wins.
    public let rules: [Rule]
    /// Where the endpoint was declared, for listings and logs.
    public let source: String?
    /// The rate limit of every answer of the endpoint (`quota:`), counted before any rule.
    public let quota: Quota?
    /// The network the endpoint's answers go through (`network:`), unless their rule or a
    /// session has its own.
    public let network: NetworkProfile?
    /// Whether some rule reads or changes state (see `Rule.usesState`).
    let usesState: Bool
    let index: RuleIndex

    public init(method: String, path: PathPattern, rules: [Rule], source: String? = nil, quota: Quota? = nil,
                network: NetworkProfile? = nil) {
        self.network = network
        self.method = method
        self.path = path
        self.rules = rules
        self.source = source
        self.quota = quota
        self.usesState = rules.contains { $0.usesState } || quota?.exceeded?.readsState == true
        self.index = RuleIndex(rules)
        self.name = "\(method) \(path)"
    }

    /// The same endpoint with other rules (rules added by `extends:`).
    public func replacingRules(_ rules: [Rule]) -> Endpoint {
        Endpoint(method: method, path: path, rules: rules, source: source, quota: quota, network: network)
    }

    /// The endpoint as written: `GET /isUserNameAvailable`. Stored, not computed: every answer
    /// carries it, and building it per request cost two appends and an allocation.
    public let name: String

    /// The plan of the first rule that answers, or nil when every rule passes.
    ///
    /// A forced rule answers without its `when` and `chance` being tested; if its cycle step
    /// passes, the rules after it are tried as usual.
    func respond(_ context: inout MatchContext, forcing forced: Int? = nil, random: RandomSource) -> ResponsePlan? {
        guard let quota else { return chooseRule(&context, forcing: forced, random: random) }
        var headers: [Field] = []
        if var refusal = quota.take(&context, headers: &headers) {
            refusal.bookkeeping.endpoint = name
            refusal.bookkeeping.rule = Quota.endpointRuleName
            refusal.declaredNetwork = network
            refusal.fitResponseHead(room: context.request.responseHeaderRoom)
            return refusal
        }
        return chooseRule(&context, forcing: forced, random: random).map { $0.adding(headers, room: context.request.responseHeaderRoom) }
    }

    private func chooseRule(_ context: inout MatchContext, forcing forced: Int?, random: RandomSource) -> ResponsePlan? {
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
            case .tests(let run):
                let value = context.value(of: run.source)
                let start = run.first, table = run.table
                let plan = run.conditions.withUnsafeBufferPointer { conditions -> ResponsePlan? in
                    // By index: `enumerated()` copied each condition out of the array.
                    func test(_ offset: Int) -> ResponsePlan? {
                        guard start + offset >= first, conditions[offset].holds(for: value) else { return nil }
                        return attempt(rules[start + offset], &context, random)
                    }
                    guard let table else {
                        for offset in conditions.indices { if let plan = test(offset) { return plan } }
                        return nil
                    }
                    return table.forEachCandidate(for: value, test)
                }
                if let plan { return plan }
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
        switch rule.action {
        case .respond(let template):
            return answer(rule, template, &context, random)
        case .cycle(let steps, let counter):
            guard case .respond(let template) = steps[counter.next(length: steps.count, session: context.session, limit: context.maxSessions)] else {
                return nil
            }
            return answer(rule, template, &context, random)
        }
    }

    /// The answer of `rule` with `template` (its own, or its cycle's step): the quota's 429,
    /// or the template's plan with the rule's state changes. (Not inlined: inlined into
    /// `chooseRule`'s several call sites, it made the compiler copy the rule's action at each.)
    @inline(never)
    private func answer(_ rule: Rule, _ template: borrowing ResponseTemplate, _ context: inout MatchContext,
                        _ random: RandomSource) -> ResponsePlan? {
        var headers: [Field] = []
        if let quota = rule.quota, var refusal = quota.take(&context, headers: &headers) {
            refusal.bookkeeping.endpoint = name
            refusal.bookkeeping.rule = rule.name
            refusal.declaredNetwork = rule.network ?? network
            refusal.fitResponseHead(room: context.request.responseHeaderRoom)
            return refusal
        }
        let changes = rule.effects.isEmpty ? [] : rule.effects.apply(&context)
        var plan = template.plan(context: &context, random: random, endpoint: name, rule: rule.name, stateChanges: changes)
        if let declared = rule.network ?? network { plan.declaredNetwork = declared }
        return headers.isEmpty ? plan : plan.adding(headers, room: context.request.responseHeaderRoom)
    }
}

extension ResponsePlan {
    /// The plan with `headers` after its own (rate-limit headers), unless it sends no head.
    func adding(_ headers: [Field], room: Int) -> ResponsePlan {
        guard !headers.isEmpty, sendsHead, bookkeeping.warning == nil else { return self }
        var plan = self
        plan.prepared = nil
        plan.headers += headers
        plan.fitResponseHead(room: room)
        return plan
    }
}

extension Endpoint {
    /// About how many bytes its answers hold (their literal text), for the byte budget of the
    /// rules added at runtime.
    var heldBytes: Int {
        func size(_ template: ResponseTemplate?) -> Int {
            guard let template else { return 0 }
            return template.body.capacityHint + template.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.capacityHint }
        }
        var total = size(quota?.exceeded)
        for rule in rules {
            total += size(rule.quota?.exceeded)
            switch rule.action {
            case .respond(let template): total += size(template)
            case .cycle(let steps, _):
                for case .respond(let template) in steps { total += size(template) }
            }
        }
        return total
    }
}
