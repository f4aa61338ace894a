import MishapSupport

/// One request being matched: the request, its session, its path parameters, and its body,
/// parsed at most once and only when a rule asks for it.
struct MatchContext {
    let request: Request
    /// The session the request names, which keeps its own cycle positions.
    let session: String?
    /// Sessions each cycle rule remembers.
    let maxSessions: Int
    var pathParameters: [Field] = []
    private var parsedBody: RequestBody?
    /// The body fields read so far and their values: rules testing the same few fields in
    /// turn (the login catalogue's `email` and `password`) walk the parsed body once a field.
    private var bodyValues: [(path: [String], value: String?)] = []
    /// The random numbers behind `chance`, delays and `random.*` placeholders.
    let random: RandomSource
    /// The session's state set while its lock is held (see `StateStore.withSet`), else nil.
    var state: StateSet?
    private let clock: @Sendable () -> Int64
    private var readNow: Int64?

    init(request: Request, session: String? = nil, maxSessions: Int = EngineOptions.defaultMaxSessions,
         random: RandomSource = RandomSource(seed: 0), clock: @escaping @Sendable () -> Int64 = MonotonicClock.milliseconds) {
        self.request = request
        self.session = session
        self.maxSessions = maxSessions
        self.random = random
        self.clock = clock
    }

    /// The monotonic time of the request, in milliseconds, read once (every test and change of
    /// one request sees the same moment).
    var now: Int64 {
        mutating get {
            if let readNow { return readNow }
            let now = clock()
            readNow = now
            return now
        }
    }

    mutating func body() -> RequestBody {
        if let parsedBody { return parsedBody }
        let body = RequestBody(of: request)
        parsedBody = body
        return body
    }

    mutating func value(of source: ValueSource) -> String? {
        switch source {
        case .query(let name): return request.queryValue(name)
        case .header(let name): return request.headerValue(name)
        case .body(let path):
            for known in bodyValues where known.path == path { return known.value }
            let value = body().value(at: path)
            if bodyValues.isEmpty { bodyValues.reserveCapacity(4) }
            bodyValues.append((path, value))
            return value
        case .pathParameter(let name): return pathParameters.first(where: { $0.name == name })?.value
        case .method: return request.method
        case .path: return request.path
        case .httpDate(let offset): return WallClock.httpDate(secondsSinceEpoch: WallClock.nowSeconds() + offset)
        case .time(let offset, .iso8601): return WallClock.iso8601(milliseconds: WallClock.nowMilliseconds() + Int64(offset) * 1000)
        case .time(let offset, .epoch): return String(WallClock.nowSeconds() + offset)
        case .state(_, let slot):
            guard let state else { return nil }
            let now = self.now
            return state.value(slot, now: now).description
        case .uuid: return RandomText.uuid(random)
        case .hex(let digits): return RandomText.hex(digits: digits, random)
        }
    }
}
