import MishapEngine

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
    /// Logs one line per request at `info`.
    public var logRequests: Bool
    /// When set, browsers on the allowed origins may call the scenarios (`--cors`).
    public var cors: CORSPolicy?

    public init(engine: EngineOptions = EngineOptions(), journalSize: Int = 1000, journalBodyLimit: Int = 64 << 10,
                admin: Bool = true, adminToken: String? = nil, logRequests: Bool = true, cors: CORSPolicy? = nil) {
        self.engine = engine
        self.journalSize = journalSize
        self.journalBodyLimit = journalBodyLimit
        self.admin = admin
        self.adminToken = adminToken
        self.logRequests = logRequests
        self.cors = cors
    }
}
