import MishapService

/// How a test server behaves; the defaults suit tests.
public struct MishapOptions: Sendable {
    /// Seeds `chance` and delay ranges so runs repeat.
    public var seed: UInt64?
    /// The header that gives a request its session (`MishapSession` sends it).
    public var sessionHeader: String
    /// The header that forces a rule by name or alias, in any case.
    public var ruleHeader: String
    /// Requests the journal keeps (the oldest make room), for `requests(...)`.
    public var journalSize: Int
    /// Picks up edits to a scenarios folder while the server runs.
    public var watch: Bool
    /// Logs one line per request (to standard error).
    public var logRequests: Bool
    /// The server's worker threads.
    public var threads: Int
    /// Answers browsers' CORS preflights and adds the CORS headers for these origins
    /// (`CORSPolicy(origins: .any)` or `.listed(["http://localhost:3000"])`), as `--cors` does.
    public var cors: CORSPolicy?
    /// Requests to `PREFIX/ID/PATH` are served as `PATH` in session `ID` (`MishapSession.baseURL`);
    /// nil turns it off.
    public var sessionPrefix: String?
    /// Sends requests no rule answers on to this server and passes its answers back, as
    /// `--upstream` does (`UpstreamOptions(url: "http://127.0.0.1:9000")`); nil answers them 404.
    public var upstream: UpstreamOptions?
    /// An OpenAPI 3.0 or 3.1 description (a file's path) that requests are checked against
    /// before the rules, as `--openapi` does: a request that does not fit gets 400 listing its
    /// problems; nil checks nothing.
    public var openAPI: String?

    public init(seed: UInt64? = nil, sessionHeader: String = "X-Mishap-Session", ruleHeader: String = "X-Mishap-Rule",
                journalSize: Int = 10_000, watch: Bool = false, logRequests: Bool = false, threads: Int = 2,
                cors: CORSPolicy? = nil, sessionPrefix: String? = ServiceOptions.defaultSessionPrefix,
                upstream: UpstreamOptions? = nil, openAPI: String? = nil) {
        self.sessionPrefix = sessionPrefix
        self.openAPI = openAPI
        self.upstream = upstream
        self.seed = seed
        self.sessionHeader = sessionHeader
        self.ruleHeader = ruleHeader
        self.journalSize = journalSize
        self.watch = watch
        self.logRequests = logRequests
        self.threads = threads
        self.cors = cors
    }
}

/// The former name of `MishapOptions`.
@available(*, deprecated, renamed: "MishapOptions")
public typealias MishapServerOptions = MishapOptions
