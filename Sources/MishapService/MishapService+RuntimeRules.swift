import MishapEngine
import MishapScenarios
import MishapSupport

// Rules added while the server runs: `POST /__mishap/rules`, `POST /__mishap/force`, and what
// a reload does to them.
extension MishapService {
    /// Why rules could not be added: problems of their text (422), an unknown endpoint or rule
    /// (400), or a limit reached (507). Nothing was added.
    public enum RuntimeRuleError: Error, Sendable {
        case problems(ScenarioError)
        case unknown(String)
        case limit(String)
    }

    /// Adds the rules of scenario text (one file: `endpoint:` and `rules:`, or `endpoints:`),
    /// tried before the files' rules: for every request, or for `session`'s; for `times`
    /// answers and then gone, or for `ttlMilliseconds`, or until removed.
    ///
    /// Compiled against the state of the scenarios in force, with reloads held off meanwhile:
    /// rules compiled against one set's state slots are never evaluated with another's.
    public func addRules(yaml text: String, session: String? = nil, times: Int? = nil,
                         ttlMilliseconds: Int? = nil) -> Result<RuntimeRules.Entry, RuntimeRuleError> {
        reloading.withLock { _ in
            let state = scenarios.state
            let compiled: ScenarioSet
            do throws(ScenarioError) {
                compiled = try ScenarioLoader.loadRuntime(yaml: text, state: state,
                                                          proxyProblem: { [loopGuard] in loopGuard.problem(with: $0) })
            } catch {
                return .failure(.problems(error))
            }
            return add(.rules(compiled.endpoints), state: state, session: session, times: times,
                       ttlMilliseconds: ttlMilliseconds, source: text)
        }
    }

    /// Makes requests to a file endpoint (`POST /login`) answer with its rule `rule`, as
    /// `X-Mishap-Rule` would: `times` of them (or all, for a while, or until removed).
    public func force(endpoint name: String, rule: String, session: String? = nil, times: Int? = nil,
                      ttlMilliseconds: Int? = nil) -> Result<RuntimeRules.Entry, RuntimeRuleError> {
        reloading.withLock { _ in
            let engine = self.engine
            let normalized = Self.normalizedEndpoint(name)
            guard let endpoint = engine.endpoint(named: normalized) else {
                let names = engine.endpoints.map(\.name)
                return .failure(.unknown("no endpoint '\(name)'\(Suggestion.hint(for: normalized, in: names)); the endpoints are "
                    + names.joined(separator: ", ")))
            }
            guard let found = endpoint.rules.first(where: { $0.isNamed(rule) }) else {
                return .failure(.unknown("no rule '\(rule)' in \(endpoint.name)\(Suggestion.hint(for: rule, in: endpoint.rules.map(\.name))); its rules are "
                    + endpoint.rules.map(\.name).joined(separator: ", ")))
            }
            return add(.force(endpoint: endpoint.name, rule: found.name), state: nil, session: session, times: times,
                       ttlMilliseconds: ttlMilliseconds, source: nil)
        }
    }

    /// `post /login` as the engine names it: `POST /login`.
    static func normalizedEndpoint(_ name: String) -> String {
        let parts = name.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else { return name }
        return parts[0].uppercased() + " " + parts[1]
    }

    private func add(_ kind: RuntimeRules.Entry.Kind, state: StateStore?, session: String?, times: Int?,
                     ttlMilliseconds: Int?, source: String?) -> Result<RuntimeRules.Entry, RuntimeRuleError> {
        let now = options.engine.clock()
        let limits = RuntimeRules.Limits(rules: options.maxRuntimeRules, rulesPerSession: options.maxRuntimeRulesPerSession,
                                         bytes: options.maxRuntimeRuleBytes)
        let added = runtime.add(session: session, limits: limits, now: now) { number in
            RuntimeRules.Entry(number: number, session: session, kind: kind, state: state, times: times,
                               expiresAt: ttlMilliseconds.map { now + Int64($0) }, addedAt: WallClock.nowMilliseconds(),
                               source: source)
        }
        switch added {
        case .success(let entry): return .success(entry)
        case .failure(let limit): return .failure(.limit(limit.reason))
        }
    }

    /// During a reload, before `engine` is in force: each runtime entry whose rules read state
    /// and were compiled for another state store is compiled again for the new one, kept with
    /// its answers and expiry (the engine it replaces keeps evaluating the earlier compilation
    /// until it is done); one that no longer compiles, or forces a rule that is gone, is
    /// removed with a warning. Rules that read no state serve with any store, and keep their
    /// cycle positions.
    func recompileRuntimeRules(for scenarios: ScenarioSet, engine: Engine) {
        var removed: Set<String> = []
        for entry in runtime.list(now: options.engine.clock()) {
            switch entry.kind {
            case .rules:
                guard entry.needsCompiling(for: scenarios.state), let source = entry.source else { continue }
                do throws(ScenarioError) {
                    let compiled = try ScenarioLoader.loadRuntime(yaml: source, state: scenarios.state)
                    entry.addCompilation(compiled.endpoints, for: scenarios.state)
                } catch {
                    logger.warning("rules \(entry.id) added at runtime no longer load after the reload; removed",
                                   metadata: error.logMetadata)
                    removed.insert(entry.id)
                }
            case .force(let name, let rule):
                guard let endpoint = engine.endpoint(named: name), endpoint.rules.contains(where: { $0.name == rule }) else {
                    logger.warning("rule \(entry.id) added at runtime forces \(name) rule \(rule), which the reload removed; removed")
                    removed.insert(entry.id)
                    continue
                }
            }
        }
        runtime.remove(ids: removed)
    }
}
