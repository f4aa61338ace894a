import MishapEngine
import MishapScenarios
import MishapUpstream

/// How a service answers besides its scenarios.
public struct ServiceOptions: Sendable {
    public var engine: EngineOptions
    /// Requests kept by the journal (the oldest make room); 0 keeps none.
    public var journalSize: Int
    /// Bytes of each request body the journal keeps.
    public var journalBodyLimit: Int
    /// Whether `/__mishap/` answers.
    public var admin: Bool
    /// When set, every admin call must present it (`Authorization: Bearer TOKEN` or
    /// `X-Mishap-Admin-Token: TOKEN`), and then clients on other machines may call too.
    /// When nil, the admin API answers loopback clients only.
    public var adminToken: String?
    /// The names and origins admin calls from a browser may come by, besides loopback ones and
    /// the server's own (`--admin-host`, `--admin-origin`).
    public var adminPolicy = AdminRequestPolicy()
    /// Logs one line per request at `info`.
    public var logRequests: Bool
    /// When set, browsers on the allowed origins may call the scenarios (`--cors`).
    public var cors: CORSPolicy?
    /// Requests to `PREFIX/ID/PATH` are served as `PATH` in session `ID` (as if they carried the
    /// session header), for clients that cannot add a header; nil turns it off.
    public var sessionPrefix: String?
    /// When set, requests no rule answers are sent on to this server and its answers passed
    /// back (`--upstream`); when nil they are answered 404.
    public var upstream: UpstreamOptions?
    /// When set, told of every call sent on to an upstream (the request as the client sent it
    /// and what came back: an answer, or why there was none), before the client is answered;
    /// `mishap record` writes the answers down with it. Called on the upstream client's thread,
    /// and only for requests that went to an upstream: requests a rule answers never reach it.
    public var upstreamAnswers: (@Sendable (Request, UpstreamResult) -> Void)?

    /// The network every answer goes through unless its session set one or its rule declares
    /// one (`--network PRESET`); nil (or the `none` preset): a perfect network.
    public var network: NetworkProfile?

    /// The API description requests are checked against before the rules (`--openapi FILE`),
    /// read again with the scenarios on every reload; nil: requests are not checked, at no cost.
    public var openAPI: String?
    /// `openAPI` already read (`MishapInstance.start` reads it when this is nil).
    public var requestContract: OpenAPILoader.Loaded?

    /// The default of `sessionPrefix`.
    public static let defaultSessionPrefix = "/__session"
    /// Rules added at runtime (`POST /__mishap/rules`) kept in all, and for one session (or for
    /// requests without one); past them an addition is refused with 507.
    public var maxRuntimeRules: Int
    public var maxRuntimeRulesPerSession: Int
    public static let defaultMaxRuntimeRules = 10_000
    public static let defaultMaxRuntimeRulesPerSession = 1_000
    /// Bytes the rules added at runtime may hold in all (their text and their compiled
    /// answers); past it an addition is refused with 507.
    public var maxRuntimeRuleBytes: Int
    public static let defaultMaxRuntimeRuleBytes = 64 << 20

    public init(engine: EngineOptions = EngineOptions(), journalSize: Int = 1000, journalBodyLimit: Int = 64 << 10,
                admin: Bool = true, adminToken: String? = nil, logRequests: Bool = true, cors: CORSPolicy? = nil,
                sessionPrefix: String? = ServiceOptions.defaultSessionPrefix,
                maxRuntimeRules: Int = ServiceOptions.defaultMaxRuntimeRules,
                maxRuntimeRulesPerSession: Int = ServiceOptions.defaultMaxRuntimeRulesPerSession,
                maxRuntimeRuleBytes: Int = ServiceOptions.defaultMaxRuntimeRuleBytes,
                upstream: UpstreamOptions? = nil,
                upstreamAnswers: (@Sendable (Request, UpstreamResult) -> Void)? = nil, network: NetworkProfile? = nil) {
        self.network = network
        self.sessionPrefix = sessionPrefix
        self.upstream = upstream
        self.upstreamAnswers = upstreamAnswers
        self.maxRuntimeRules = maxRuntimeRules
        self.maxRuntimeRulesPerSession = maxRuntimeRulesPerSession
        self.maxRuntimeRuleBytes = maxRuntimeRuleBytes
        self.engine = engine
        self.journalSize = journalSize
        self.journalBodyLimit = journalBodyLimit
        self.admin = admin
        self.adminToken = adminToken
        self.logRequests = logRequests
        self.cors = cors
    }
}
