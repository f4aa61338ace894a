/// One named rule of an endpoint: when a request matches, what to answer. A class, so the
/// matching loop passes rules around without copying (and retaining) their parts.
public final class Rule: Sendable {
    /// What a rule does once its `when` holds.
    public enum Action: Sendable {
        /// Always the same response.
        case respond(ResponseTemplate)
        /// One step per matching request, in order, then from the start again.
        case cycle([CycleStep], CycleCounter)
    }

    /// A step of a cycle.
    public enum CycleStep: Sendable {
        case respond(ResponseTemplate)
        /// Fall through: the rules after this one answer as if this rule had not matched.
        case pass
    }

    public let name: String
    /// Other names `X-Mishap-Rule` accepts for the rule (`maintenance!`), besides `name`.
    public let aliases: [String]
    /// Alternatives: the rule matches when any of them holds.
    public let when: [Predicate]
    public let action: Action
    /// The fraction of matching requests the rule applies to (the others fall through);
    /// nil applies it to all.
    public let chance: Double?
    /// The state changes the rule makes when it answers (`set:`), in order.
    public let effects: [StateEffect]
    /// The rate limit of the rule's answers (`quota:`), if any.
    public let quota: Quota?
    /// The network the rule's answers go through (`network:`), unless a session has its own.
    public let network: NetworkProfile?
    /// Whether answering with the rule reads or changes state: then the session's state is
    /// locked from the rule's first test to its last change.
    let usesState: Bool
    /// The file the rule was declared in (one string shared by its rules), or the whole
    /// `source` when given as one.
    private let sourceFile: String?
    /// The line in `sourceFile`; 0 when `sourceFile` is the whole source.
    private let sourceLine: Int
    /// The column of the rule in its line (1-based).
    private let sourceColumn: Int

    /// Where the rule was declared (`scenarios/login.yaml:12`), for listings and logs: made
    /// when asked, so rules of one file share its name instead of each holding a copy.
    public var source: String? {
        guard let sourceFile else { return nil }
        return sourceLine > 0 ? "\(sourceFile):\(sourceLine)" : sourceFile
    }

    /// Where the rule was declared, for located messages; nil when not declared in a file.
    public var location: (file: String, line: Int, column: Int)? {
        guard let sourceFile, sourceLine > 0 else { return nil }
        return (sourceFile, sourceLine, sourceColumn)
    }

    public init(name: String, aliases: [String] = [], when: [Predicate] = [.always], action: Action, chance: Double? = nil,
                effects: [StateEffect] = [], quota: Quota? = nil, network: NetworkProfile? = nil,
                source: String? = nil) {
        self.network = network
        self.effects = effects
        self.quota = quota
        self.usesState = Self.usesState(when: when, action: action, effects: effects, quota: quota)
        self.name = name
        self.aliases = aliases
        self.when = when
        self.action = action
        self.chance = chance
        self.sourceFile = source
        self.sourceLine = 0
        self.sourceColumn = 0
    }

    /// A rule declared at `line` of `file`.
    public init(name: String, aliases: [String] = [], when: [Predicate] = [.always], action: Action, chance: Double? = nil,
                effects: [StateEffect] = [], quota: Quota? = nil, network: NetworkProfile? = nil,
                file: String, line: Int, column: Int = 1) {
        self.network = network
        self.effects = effects
        self.quota = quota
        self.usesState = Self.usesState(when: when, action: action, effects: effects, quota: quota)
        self.name = name
        self.aliases = aliases
        self.when = when
        self.action = action
        self.chance = chance
        self.sourceFile = file
        self.sourceLine = max(1, line)
        self.sourceColumn = max(1, column)
    }

    private static func usesState(when: [Predicate], action: Action, effects: [StateEffect], quota: Quota?) -> Bool {
        if !effects.isEmpty || when.contains(where: \.readsState) { return true }
        if quota?.exceeded?.readsState == true { return true }
        switch action {
        case .respond(let response): return response.readsState
        case .cycle(let steps, _):
            return steps.contains { step in
                if case .respond(let response) = step { return response.readsState }
                return false
            }
        }
    }

    /// Whether `X-Mishap-Rule: forced` names this rule: its name or an alias, ASCII letters in
    /// any case (`SERVERERROR` is `serverError`).
    public func isNamed(_ forced: String) -> Bool {
        name.equalsIgnoringASCIICase(forced) || aliases.contains { $0.equalsIgnoringASCIICase(forced) }
    }

    func matches(_ context: inout MatchContext) -> Bool {
        for predicate in when where predicate.holds(in: &context) { return true }
        return false
    }
}
