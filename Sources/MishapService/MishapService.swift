import Logging
import MishapEngine
import MishapScenarios
import MishapHTTP
import MishapUpstream
import MishapSupport
import Synchronization

/// Mishap as a running service: the scenarios in force (swapped whole on reload), the request
/// journal, the Retry-After check and the admin API under `/__mishap/`. The server asks it
/// what to answer and tells it when each request is done.
public final class MishapService: Responder, RequestObserver, @unchecked Sendable {
    public let source: ScenarioSource
    public let options: ServiceOptions
    public let journal: RequestJournal
    public let retries: RetryTracker
    /// What each session's clients did, for the verdict (`GET /__mishap/verdict`).
    let history: ClientHistory
    /// Rules added at runtime: kept across reloads, compiled again against each new set.
    public let runtime = RuntimeRules()
    /// What sessions set for their time: clock offsets and `Retry-After` scales (`MishapService+SessionSettings.swift`).
    let sessionSettings = SessionSettings()
    /// The network profile each session set at runtime (`MishapService+Network.swift`).
    let sessionNetworks = SessionNetworks()
    /// The server's default profile (`--network`); nil without one, or for `none`.
    let defaultNetwork: NetworkProfile?
    /// Draws latencies and losses, seeded by `--seed`.
    let networkRandom: RandomSource
    /// The last requests no rule answered, with the nearest rules.
    public let unmatched = UnmatchedRequests()
    /// The HTTPS port and the TLS failure catalogue, when serving them (`GET /__mishap/tls`).
    public let tls = Mutex<TLSListing?>(nil)
    let logger: Logger
    /// The logger's handler when request lines can skip swift-log's metadata dictionary: a
    /// `LineLogHandler` with no metadata of its own, on a logger with no metadata provider.
    private let requestLines: LineLogHandler?
    /// Whether a line is logged per request (`logRequests`, at a log level of info or below),
    /// and whether admin calls that only read get one too (debug): the logger's level, read once
    /// (each read copies its handler).
    private let logsRequests: Bool
    private let logsAdminReads: Bool
    /// Sends requests on to upstream servers: those no rule answers to `options.upstream`, and
    /// those a rule's `proxy` sends. Started with the service when there is an upstream, else
    /// on the first proxied request; when libcurl cannot start, those requests are answered 502
    /// saying so.
    let upstreamClient: LazyUpstreamClient
    /// Keeps requests from being sent on to this Mishap itself.
    let loopGuard = ProxyLoopGuard()

    struct Loaded {
        let scenarios: ScenarioSet
        let engine: Engine
        /// Milliseconds since 1970.
        let loadedAt: Int64
    }
    private let loaded: Mutex<Loaded>
    /// Serializes reloads (a file event and SIGHUP at once), and rules added at runtime with
    /// them (they are compiled against the state of the scenarios in force).
    let reloading = Mutex(())
    private let reloadCount = Atomic<Int>(0)
    /// The problems of the last reload when it failed (the previous scenarios kept serving).
    private let lastFailure = Mutex<ScenarioError?>(nil)
    /// Whether requests are checked against an API description (`options.openAPI`), read once:
    /// without one, a request costs one test of this flag (`MishapService+RequestContract.swift`).
    let checksRequests: Bool
    /// The API description in force, swapped with the scenarios on reload.
    let contract: Mutex<OpenAPILoader.Loaded?>

    /// Loads the scenarios; throws their problems, located.
    public convenience init(source: ScenarioSource, options: ServiceOptions = ServiceOptions(),
                            logger: Logger = Logger(label: "mishap")) throws(ScenarioError) {
        var options = options
        if let path = options.openAPI, options.requestContract == nil { options.requestContract = try OpenAPILoader.load(path: path) }
        try self.init(source: source, scenarios: Self.load(source, previous: nil), options: options, logger: logger)
    }

    /// Serves scenarios already loaded from `source` (reloads read `source` again).
    public init(source: ScenarioSource, scenarios: ScenarioSet, options: ServiceOptions = ServiceOptions(),
                logger: Logger = Logger(label: "mishap")) {
        self.source = source
        self.options = options
        self.logger = logger
        if let handler = logger.handler as? LineLogHandler, handler.metadata.isEmpty, logger.metadataProvider == nil {
            requestLines = handler
        } else {
            requestLines = nil
        }
        logsRequests = options.logRequests && logger.logLevel <= .info
        logsAdminReads = logger.logLevel <= .debug
        defaultNetwork = options.network.flatMap { $0.isNeutral ? nil : $0 }
        networkRandom = RandomSource(seed: options.engine.seed)
        upstreamClient = LazyUpstreamClient(
            timeoutMilliseconds: options.upstream?.timeoutMilliseconds ?? UpstreamOptions.defaultTimeoutMilliseconds,
            caFile: options.upstream?.caFile, memoryBytes: options.upstream?.memoryBytes ?? UpstreamClient.defaultMemoryBytes)
        if options.upstream?.url != nil, case .failure(let failure) = upstreamClient.client() {
            logger.error("\(failure.message); requests no rule answers get 502 instead of going to the upstream")
        }
        journal = RequestJournal(capacity: options.journalSize, bodyLimit: options.journalBodyLimit)
        checksRequests = options.openAPI != nil || options.requestContract != nil
        contract = Mutex(options.requestContract)
        retries = RetryTracker(capacity: max(options.journalSize, 100))
        history = ClientHistory(maxSessions: min(options.engine.maxSessions, 10_000))
        loaded = Mutex(Loaded(scenarios: scenarios, engine: scenarios.makeEngine(options: options.engine, runtime: runtime),
                              loadedAt: WallClock.nowMilliseconds()))
    }

    static func load(_ source: ScenarioSource, previous: ScenarioSet?) throws(ScenarioError) -> ScenarioSet {
        switch source {
        case .directory(let directory): try ScenarioLoader.load(directory: directory, previous: previous)
        case .yaml(let text, let name): try ScenarioLoader.load(yaml: text, name: name, previous: previous)
        }
    }

    /// The scenarios answering now.
    public var scenarios: ScenarioSet { loaded.withLock { $0.scenarios } }
    var engine: Engine { loaded.withLock { $0.engine } }
    /// How many reloads succeeded.
    public var reloads: Int { reloadCount.load(ordering: .relaxed) }
    /// The problems of the last reload attempt, when it failed; nil after a good one.
    public var lastReloadFailure: ScenarioError? { lastFailure.withLock { $0 } }

    // MARK: Reload and reset

    /// Reads the scenarios again and, when they are valid, answers with them from the next
    /// request on. When they are not, the ones in force keep answering and the problems are
    /// logged and thrown. Unchanged cycle rules keep their positions; changed ones start over.
    @discardableResult
    public func reload() throws(ScenarioError) -> ReloadSummary {
        try reload(from: source)
    }

    /// Replaces inline scenario text (or reloads a folder), as `reload()`.
    @discardableResult
    public func reload(yaml text: String, name: String = "inline.yaml") throws(ScenarioError) -> ReloadSummary {
        try reload(from: .yaml(text, name: name))
    }

    private func reload(from source: ScenarioSource) throws(ScenarioError) -> ReloadSummary {
        let outcome: Result<ReloadSummary, ScenarioError> = reloading.withLock { _ in
            let previous = scenarios
            let next: ScenarioSet
            do throws(ScenarioError) {
                next = try Self.load(source, previous: previous)
            } catch {
                lastFailure.withLock { $0 = error }
                logger.error("reload failed; still serving the previous scenarios", metadata: error.logMetadata)
                return .failure(error)
            }
            var description: OpenAPILoader.Loaded?
            if let path = options.openAPI {
                do throws(ScenarioError) {
                    description = try OpenAPILoader.load(path: path)
                } catch {
                    lastFailure.withLock { $0 = error }
                    logger.error("reload failed: the API description has problems; still serving the previous scenarios and description",
                                 metadata: error.logMetadata)
                    return .failure(error)
                }
            }
            let engine = next.makeEngine(options: options.engine, runtime: runtime)
            recompileRuntimeRules(for: next, engine: engine)
            if let description { contract.withLock { $0 = description } }
            loaded.withLock { $0 = Loaded(scenarios: next, engine: engine, loadedAt: WallClock.nowMilliseconds()) }
            lastFailure.withLock { $0 = nil }
            reloadCount.add(1, ordering: .relaxed)
            let kept = next.cycleCounters.filter { key, counter in previous.cycleCounters[key] === counter }.count
            let summary = ReloadSummary(files: next.files.count, endpoints: next.endpoints.count,
                                        rules: next.ruleCount, cyclesKept: kept, duration: next.loadDuration)
            logger.info("\(next.loadSummary("reloaded")); \(kept) cycle(s) kept their positions")
            logWarnings()
            return .success(summary)
        }
        // The previous set is gone once no request holds it; give its memory back to the system.
        FreedMemory.returnToSystem()
        return try outcome.get()
    }

    /// Starts cycles, state values and quotas over, removes the rules added at runtime, and
    /// clears the journal, the unmatched requests, the Retry-After observations and the
    /// sessions' clock offsets and scales: everything, or only what belongs to one session.
    public func reset(session: String? = nil) {
        let engine = self.engine
        if let session {
            engine.reset(session: session)
        } else {
            engine.reset()
        }
        journal.clear(session: session)
        retries.clear(session: session)
        if let session { history.clear(session: .some(session)) } else { history.clear() }
        runtime.removeAll(session: session)
        unmatched.clear(session: session)
        endSessionSettings(session: session)
        clearNetwork(session: session)
    }

    /// The state values of a session (the shared set without one), each with the milliseconds
    /// until it reverts to its initial value; empty when the scenarios declare no state.
    public func stateValues(session: String? = nil) -> [(declaration: StateDeclaration, value: StateValue, remaining: Int64?)] {
        engine.stateValues(session: session)
    }

    /// Sets state values of a session (the shared set without one), each for good or for some
    /// milliseconds: all of them, or none when one is wrong (the error says which).
    public func setState(_ values: [(name: String, value: StateValue, milliseconds: Int?)],
                         session: String? = nil) -> Result<[StateChange], StateUpdateError> {
        engine.setState(values, session: session)
    }

    /// Logs each warning of the scenarios in force (a rule that can never answer), one line
    /// each at `warning` level, located.
    func logWarnings() {
        let scenarios = self.scenarios
        for warning in scenarios.warnings {
            logger.warning("\(warning.description)")
        }
        logContractWarnings()
        if let prefix = options.sessionPrefix {
            for endpoint in scenarios.endpoints where SessionPath.split(endpoint.path.description, prefix: prefix) != .none {
                let text = "\(endpoint.source ?? endpoint.name): warning: \(endpoint.name) is under the session prefix \(prefix)/: "
                    + "requests to it are taken as PATH in a session; choose another prefix with --session-prefix, or another path"
                logger.warning("\(text)")
            }
        }
    }

    // MARK: Answering

    public func respond(to original: Request) -> ResponsePlan {
        // A request this Mishap sent on that came back to it: refused before the admin API or a
        // rule sees it.
        if loopGuard.isArmed, let loop = loopGuard.refusal(for: original) {
            logger.warning("\(original.method) \(original.path) came back to this Mishap through its own proxying; answered 508")
            return record(original, loop, unmatched: false)
        }
        if options.admin && original.path.hasUTF8Prefix(AdminAPI.prefixBytes) {
            return AdminAPI(service: self).respond(to: original)
        }
        if let prefix = options.sessionPrefix {
            switch SessionPath.rewrite(original, prefix: prefix, sessionHeader: options.engine.sessionHeader) {
            case .some(.some(let rewritten)): return respond(toRewritten: rewritten)
            case .some(.none): break
            case .none:
                // No rule was asked: noted as a request no rule answers, with the nearest paths.
                return record(original, .error(404, reason: "\(prefix)/ takes a session id and a path: \(prefix)/ID/PATH"),
                              unmatched: true)
            }
        }
        return respond(toRewritten: original)
    }

    /// The answer to a request whose session prefix is taken care of (the request as sent,
    /// or with its prefix made a session header), recorded.
    private func respond(toRewritten request: Request) -> ResponsePlan {
        guard let cors = options.cors, let origin = request.headerValue("Origin") else {
            return answer(request, engine: engine)
        }
        let engine = self.engine
        if let preflight = cors.preflight(request, methods: engine.methods(forPath: request.path)) {
            return record(request, preflight, unmatched: false)
        }
        let plan = answer(request, engine: engine)
        // The upstream's answer gets the CORS headers when it comes (`forward`).
        guard plan.destination.isHere else { return plan }
        return cors.decorate(plan, origin: origin)
    }

    /// The engine's answer to `request`, sent where it goes (`route`), noted: a rule's plan, or
    /// for a request no rule answers, the upstream's answer when there is an upstream, else
    /// the engine's 404.
    private func answer(_ request: Request, engine: Engine) -> ResponsePlan {
        if checksRequests, let refusal = refusal(of: request) { return refusal }
        guard case .answered(var plan) = engine.answer(to: request) else {
            let upstream = options.upstream?.url != nil
            var plan = upstream ? ResponsePlan.passedOn(to: .serverUpstream) : Engine.notFound
            let network = applyNetwork(request, &plan)
            note(request, &plan, unmatched: !upstream, network: network)
            return plan
        }
        // Changed in place (`route`), not replaced by a plan returned anew: then this plan was
        // copied out to be returned and the original destroyed, about 500 instructions a request.
        if case .serverUpstream = plan.destination { route(&plan) }
        applySessionSettings(request, &plan)
        let network = applyNetwork(request, &plan)
        note(request, &plan, unmatched: false, network: network)
        return plan
    }

    /// Notes `plan`, the answer to `request`, in the journal and the Retry-After check, and
    /// returns it; `unmatched`: no rule answered the request.
    private func record(_ request: Request, _ plan: ResponsePlan, unmatched: Bool) -> ResponsePlan {
        var plan = plan
        note(request, &plan, unmatched: unmatched)
        return plan
    }

    /// The same in place (no copy of the plan, on the path of every request): notes `plan` in
    /// the journal and the Retry-After check, and for a request no rule answered (`unmatched`),
    /// in the unmatched requests, with the near-miss remark for the log on its plan.
    /// `network`: what a network profile did to the answer, for the journal.
    /// `contractProblems`: the problems of a request the API description refused (unmatched too).
    func note(_ request: Request, _ plan: inout ResponsePlan, unmatched isUnmatched: Bool, network: NetworkShaping? = nil,
              contractProblems: [String]? = nil) {
        let wantsJournal = journal.capacity > 0
        guard wantsJournal || plan.bookkeeping.endpoint != nil || isUnmatched else { return }
        let now = WallClock.nowMilliseconds()
        let session = request.headerValue(options.engine.sessionHeader)
        var nearMisses: [NearMiss] = []
        if let contractProblems {
            plan.bookkeeping.note = "does not match the API description: " + contractProblems.joined(separator: "; ")
        } else if isUnmatched {
            nearMisses = engine.nearMisses(for: request)
            plan.bookkeeping.note = nearMisses.first.map { "nearest: \($0)" } ?? "no endpoint has this path"
        }
        var id: UInt64 = 0
        if wantsJournal {
            var entry = JournalEntry(
                id: 0, time: now, method: request.method, path: request.path, query: request.query,
                headers: request.headers, body: request.body, bodySize: request.body.count, session: session,
                endpoint: plan.bookkeeping.endpoint, rule: plan.bookkeeping.rule,
                status: plan.fault == nil && !plan.hang && plan.destination.isHere ? plan.status : nil,
                fault: plan.fault, delayMilliseconds: plan.delayMilliseconds, hang: plan.hang,
                stateChanges: plan.bookkeeping.stateChanges, runtimeRule: plan.bookkeeping.runtimeRule,
                upstream: upstreamURL(plan.destination), network: network, range: plan.bookkeeping.range,
                eventStream: plan.stream.flatMap { if case .events = $0 { EventStreamRecord() } else { nil } })
            entry.contractProblems = contractProblems
            id = journal.record(entry)
            plan.bookkeeping.completionTag = id
            // Skipped until a stream of events was journaled: no request can resume one before.
            if journal.mayResumeStreams, let lastID = request.headerValue("Last-Event-ID") {
                journal.tieResume(id, session: session, lastID: lastID)
            }
        }
        if isUnmatched {
            unmatched.record(UnmatchedRequest(id: id, time: now, method: request.method, path: request.path, query: request.query,
                                              session: session, nearMisses: nearMisses, contractProblems: contractProblems))
        }
        if let endpoint = plan.bookkeeping.endpoint {
            retries.observe(session: session, endpoint: endpoint, now: now, plan: plan)
        }
        guard !ClientAttempt.isUneventful(request, plan) || history.hasStarted(session: session) else { return }
        var attempt = ClientAttempt(id: id, time: now + clockOffset(session: session), request: request, plan: plan)
        if attempt.followedToEnd && id == 0 {
            attempt.id = history.nextOwnID()
            plan.bookkeeping.completionTag = attempt.id
        }
        history.record(attempt, session: session)
    }

    /// Returns once every request line logged so far is written.
    public func flushLog() {
        requestLines?.writer.flush()
    }

    /// Whether each request is followed to its end in detail: when its line is logged.
    public var followsEveryRequest: Bool { logsRequests }

    /// The server is done with a journaled request (not logged): its entry notes how long it took.
    public func finished(tag: UInt64, completedNormally: Bool) {
        journal.complete(tag, completedNormally: completedNormally)
        history.complete(tag, completedNormally: completedNormally)
    }

    public func completed(_ request: CompletedRequest) {
        if request.completionTag != 0 {
            journal.complete(request.completionTag, completedNormally: request.completedNormally)
            history.complete(request.completionTag, completedNormally: request.completedNormally)
        }
        guard logsRequests else { return }
        // Admin calls that only read (a dashboard polls every second) are logged at debug;
        // those that change something, at info.
        if !logsAdminReads, request.method == "GET" || request.method == "HEAD", options.admin,
           request.path.hasUTF8Prefix(AdminAPI.prefixBytes) {
            return
        }
        if requestLines != nil {
            // Through the optional rather than `if let`, which would copy the handler.
            requestLines?.logRequest(request)
            return
        }
        var metadata: Logger.Metadata = [
            "method": .string(request.method),
            "path": .string(request.path),
            "durationMs": .stringConvertible(Double(request.durationHundredthsOfMillisecond) / 100),
        ]
        if let status = request.status {
            metadata["status"] = .stringConvertible(status)
        } else if let fault = request.fault {
            metadata["fault"] = .string(fault.rawValue)
        }
        if !request.completedNormally { metadata["closedEarly"] = .stringConvertible(true) }
        if request.bodyIncomplete { metadata["bodyIncomplete"] = .stringConvertible(true) }
        if let rule = request.rule { metadata["rule"] = .string(rule) }
        if let note = request.note { metadata["unmatched"] = .string(note) }
        if let endpoint = request.endpoint { metadata["endpoint"] = .string(endpoint) }
        if let upstream = request.upstream { metadata["upstream"] = .string(upstream) }
        logger.info("\(request.method) \(request.path)", metadata: metadata)
    }
}
