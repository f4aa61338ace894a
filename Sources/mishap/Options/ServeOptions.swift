import ArgumentParser
import Logging
import MishapEngine
import MishapHTTP
import MishapService
import MishapSupport

/// The options of `serve`, which `start` takes too (and hands to the server it starts).
struct ServeOptions: ParsableArguments {
    @OptionGroup var scenarioOptions: ScenariosOption
    @OptionGroup(title: "HTTPS") var tlsOptions: TLSServeOptions
    @OptionGroup(title: "Upstream") var upstreamOptions: UpstreamServeOptions

    @Option(help: "The address to bind. Loopback by default (a warning says when it is not); 0.0.0.0 is every IPv4 interface, :: every interface for IPv4 and IPv6 clients alike, and one IPv6 address (::1) serves IPv6 only.")
    var host: String = "127.0.0.1"

    @Option(help: "The TCP port; 0 picks a free one (read it from the first output line, or --port-file); off serves HTTPS only (with --tls-port).")
    var port: PortSetting = .number(8080)

    @Option(name: .customLong("admin-port"), help: ArgumentHelp("Serve the admin API and the dashboard (/__mishap/) on this port too, loopback (on --host with --admin-token), never taken down; 0 picks a free one. With it, the serving port can be taken down (POST /__mishap/down, mishap down), and mishap commands call the admin port. Not opened with --no-admin (a warning says so).", valueName: "port"))
    var adminPort: Int?

    @Option(name: .customLong("port-file"), help: ArgumentHelp("Write the port listened on to this file once serving (useful with --port 0).", valueName: "path"))
    var portFile: String?

    @Option(help: "Worker threads, each with its own event loop (the default is one per processor).")
    var threads: Int = Platform.processorCount

    @Option(name: .customLong("event-loop"), help: ArgumentHelp("How worker threads wait for sockets: auto (epoll where there is one), epoll, or poll (portable, and slower with many connections).", valueName: "kind"))
    var eventLoop: ServerConfiguration.EventLoop = .auto

    @Option(name: .customLong("max-body"), help: ArgumentHelp("Largest request body accepted; larger ones get 413.", valueName: "bytes"))
    var maxBody: Int = 10 << 20

    @Option(name: .customLong("max-header-size"), help: ArgumentHelp("Largest header section accepted (1024 to 1048576); larger ones get 431. It also sizes each connection's buffer, so memory per connection: this limit plus 16 KiB (8 KiB for a response's headers, 8 KiB for the request line and libmicrohttpd's bookkeeping).", valueName: "bytes"))
    var maxHeaderSize: Int = 8 << 10

    @Option(name: .customLong("connection-limit"), help: ArgumentHelp("Most connections open at once; more wait in the listen queue until one closes. The open-file limit is raised to fit (a warning says so when it cannot).", valueName: "count"))
    var connectionLimit: Int = 4096

    @Option(name: .customLong("connection-timeout"), help: ArgumentHelp("Close a connection idle this long (slow senders included); 0 never does. Delayed, dribbled and hanging answers are not idle. Whole seconds, or with a unit: 30s, 2m.", valueName: "duration"))
    var connectionTimeout = DurationOption(seconds: 30)

    @Option(name: .customLong("head-timeout"), help: ArgumentHelp("Close a connection that has not sent a whole request head (request line and headers) this long after it was accepted or its previous request ended, however it trickles; 0 never does. While on, the connections still sending a head are also closed, oldest first, to keep a tenth of --connection-limit free for new clients (none under a limit of 10). An idle keep-alive connection is closed after it too. Whole seconds, or with a unit: 30s, 2m.", valueName: "duration"))
    var headTimeout = DurationOption(seconds: 10)

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical. Request lines are logged at info.")
    var logLevel: Logger.Level = .info

    @Option(name: .customLong("log-format"), help: "text, or json (one object per line).")
    var logFormat: LineLogHandler.Format = .text

    @Option(help: "Seeds 'chance', delay ranges and garbage bytes, so a run of requests can be repeated.")
    var seed: UInt64?

    @Option(name: .customLong("session-header"), help: ArgumentHelp("The header that names a request's session: requests of a session keep their own cycle positions, state, quota counts, runtime rules and journal entries, one set per value.", valueName: "name"))
    var sessionHeader: String = EngineOptions().sessionHeader

    @Option(name: .customLong("rule-header"), help: ArgumentHelp("Requests carrying this header are answered by the named rule of their endpoint, whatever its 'when'.", valueName: "name"))
    var ruleHeader: String = EngineOptions().ruleHeader

    @Option(name: .customLong("journal-size"), help: ArgumentHelp("Requests the journal keeps for /__mishap/requests (the oldest make room), their bodies cut at 64 KiB; 0 keeps none.", valueName: "count"))
    var journalSize: Int = 1000

    @Option(name: .customLong("max-sessions"), help: ArgumentHelp("Sessions each cycle rule, each quota and the state remember; past that, the least recently seen start over (the most recent half are always kept while their values average 128 bytes or less). A session is kept by its whole value, so two never share a count; long values make the oldest go sooner.", valueName: "count"))
    var maxSessions: Int = EngineOptions.defaultMaxSessions

    @Option(name: .customLong("session-prefix"), help: ArgumentHelp("Requests to PREFIX/ID/PATH are served as PATH in session ID, for clients that cannot add the session header (an app under a UI test); 'off' turns it off.", valueName: "prefix"))
    var sessionPrefix: String = ServiceOptions.defaultSessionPrefix

    /// `--session-prefix`, nil when off.
    var sessionPrefixOption: String? { sessionPrefix == "off" ? nil : sessionPrefix }

    @Option(name: .customLong("max-runtime-rules"), help: ArgumentHelp("Rules added at runtime (POST /__mishap/rules) kept in all; past that an addition is refused with 507.", valueName: "count"))
    var maxRuntimeRules: Int = ServiceOptions.defaultMaxRuntimeRules

    @Option(name: .customLong("max-runtime-rules-per-session"), help: ArgumentHelp("Rules added at runtime kept for one session (or for requests without one).", valueName: "count"))
    var maxRuntimeRulesPerSession: Int = ServiceOptions.defaultMaxRuntimeRulesPerSession

    @Option(name: .customLong("max-runtime-rule-bytes"), help: ArgumentHelp("Bytes the rules added at runtime may hold in all (their text and their answers); past that an addition is refused with 507.", valueName: "bytes"))
    var maxRuntimeRuleBytes: Int = ServiceOptions.defaultMaxRuntimeRuleBytes

    @Option(name: .customLong("openapi"), help: ArgumentHelp("Check each request against this OpenAPI 3.0 or 3.1 description (YAML or JSON) before the rules: a request an operation describes whose parameters or JSON body do not fit gets 400 listing every problem (noted in the journal and /__mishap/unmatched); one no operation describes goes to the rules. Read again on reload (a bad one keeps the last good). docs/request-checking.md.", valueName: "file"))
    var openAPI: String?

    @Flag(name: .customLong("no-admin"), help: "Turn off the admin API under /__mishap/.")
    var noAdmin = false

    @Option(name: .customLong("admin-token"), help: ArgumentHelp("Require this token on every admin call (Authorization: Bearer TOKEN, or X-Mishap-Admin-Token), and then accept admin calls from other machines too. Read from MISHAP_ADMIN_TOKEN when not given.", valueName: "token"))
    var adminTokenOption: String?

    /// The admin token: the flag, else the environment variable.
    var adminToken: String? {
        adminTokenOption ?? Platform.environment(Self.adminTokenVariable)
    }

    static let adminTokenVariable = "MISHAP_ADMIN_TOKEN"

    @Option(name: .customLong("admin-host"), help: ArgumentHelp("Answer admin calls sent to this host name too (repeatable). Without it, an admin call whose Host is not an address, localhost or a *.localhost name is refused (403), so a web page cannot reach the admin API through a DNS name it points at 127.0.0.1 (DNS rebinding). Not needed with --admin-token.", valueName: "name"))
    var adminHosts: [String] = []

    @Option(name: .customLong("admin-origin"), help: ArgumentHelp("Let web pages of this origin (scheme://host[:port]) make admin calls that change something (repeatable). Without it, such a call from a browser page of another origin than Mishap's own is refused (403), so a page you visit cannot add rules or reset; calls without Origin (curl, scripts, tests) are not affected.", valueName: "origin"))
    var adminOrigins: [String] = []

    /// `service` with the admin hosts and origins allowed.
    func withAdminPolicy(_ service: ServiceOptions) -> ServiceOptions {
        var service = service
        service.adminPolicy = AdminRequestPolicy(hosts: adminHosts, origins: adminOrigins)
        service.network = network.flatMap(NetworkPresets.named)
        service.openAPI = openAPI
        return service
    }

    @Option(help: ArgumentHelp("Put every answer through this network unless its session sets one or its rule declares one: "
        + NetworkPresets.names.joined(separator: ", ") + " (docs/network.md has their figures).", valueName: "preset"))
    var network: String?

    @Option(name: .customLong("cors"), help: ArgumentHelp("Let web pages from these origins call the scenarios: '*', or origins separated by commas (http://localhost:3000). Preflights are answered and every answer (faults aside) carries the CORS headers. It never opens the admin API to a page (--admin-origin does).", valueName: "origins"))
    var cors: String?

    /// `--cors`, parsed (`validate` has refused a value that does not parse).
    var corsPolicy: CORSPolicy? {
        cors.flatMap { try? CORSPolicy(parsing: $0) }
    }

    @Option(help: ArgumentHelp("Pick up edits to the scenarios folder: auto (inotify, else polling), poll, or off. SIGHUP reloads in every case.", valueName: "mode"))
    var watch: MishapInstance.WatchMode = .auto

    @Option(name: .customLong("watch-settle"), help: ArgumentHelp("How long a scenario file written in place must stay unchanged before it is read (one renamed into place is read at once). " + DurationOption.rule, valueName: "duration"))
    var watchSettle = DurationOption(argument: "300ms")

    @Option(help: ArgumentHelp("On SIGTERM or SIGINT, how long requests in flight (delayed and dribbled ones too) may take to finish; requests held by 'hang' are let go at once. " + DurationOption.rule, valueName: "duration"))
    var grace = DurationOption(seconds: 10)

    @Option(name: .customLong("pid-file"), help: ArgumentHelp("Write the process id (and, on a second line, the URL) to this file while serving, locked by the server (a second server with the same pid file exits 1), removed at exit ($MISHAP_PID_FILE when not given; start: else ./mishap.pid).", valueName: "path"))
    var pidFile: String?

    /// Where `start` learns that the server is up: the URL is written to this descriptor, then it is closed.
    @Option(name: .customLong("ready-fd"), help: .hidden)
    var readyDescriptor: Int32?

    func validate() throws {
        if let network, NetworkPresets.named(network) == nil {
            throw ValidationError("--network takes a preset: \(NetworkPresets.names.joined(separator: ", ")); not '\(network)'")
        }
        switch port {
        case .number(let number):
            guard (0...65535).contains(number) else { throw ValidationError("--port must be from 0 to 65535, or off") }
        case .off:
            guard tlsOptions.port != nil else { throw ValidationError("--port off needs --tls-port: there would be nothing to serve") }
        }
        if let adminPort {
            guard (0...65535).contains(adminPort) else { throw ValidationError("--admin-port must be from 0 to 65535") }
            if adminPort != 0, adminPort == port.number {
                throw ValidationError("--admin-port must differ from --port: the serving port goes down, the admin port never")
            }
        }
        guard threads >= 1 else { throw ValidationError("--threads must be at least 1") }
        guard maxBody >= 0 else { throw ValidationError("--max-body must not be negative") }
        guard (1 << 10...1 << 20).contains(maxHeaderSize) else { throw ValidationError("--max-header-size must be from 1024 to 1048576 bytes") }
        guard (1...1_000_000).contains(connectionLimit) else { throw ValidationError("--connection-limit must be from 1 to 1000000") }
        try connectionTimeout.check("--connection-timeout", wholeSeconds: true)
        try headTimeout.check("--head-timeout", wholeSeconds: true)
        guard (1...10_000_000).contains(maxSessions) else { throw ValidationError("--max-sessions must be from 1 to 10000000") }
        if let token = adminToken {
            guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
                throw ValidationError("the admin token (--admin-token or \(Self.adminTokenVariable)) must be printable ASCII with no spaces, and not empty")
            }
        }
        if let cors {
            do { _ = try CORSPolicy(parsing: cors) } catch { throw ValidationError(error.message) }
        }
        for name in adminHosts { if let problem = AdminRequestPolicy.problem(withHost: name) { throw ValidationError(problem) } }
        for origin in adminOrigins { if let problem = AdminRequestPolicy.problem(withOrigin: origin) { throw ValidationError(problem) } }
        let ports = [port.number, tlsOptions.port].compactMap { $0 }
        if let problem = upstreamOptions.selfProblem(host: host, ports: ports) { throw ValidationError(problem) }
        guard journalSize >= 0 else { throw ValidationError("--journal-size must not be negative") }
        if sessionPrefix != "off" {
            guard sessionPrefix.hasPrefix("/"), sessionPrefix.count > 1, !sessionPrefix.hasSuffix("/"),
                  sessionPrefix.allSatisfy({ $0.isASCII && !$0.isWhitespace && $0 != "?" && $0 != "%" && $0 != "#" }),
                  !sessionPrefix.hasPrefix("/__mishap") else {
                throw ValidationError("--session-prefix must be a path like /__session (starting with '/', not ending with one, not under /__mishap/), or off")
            }
        }
        guard (0...1_000_000).contains(maxRuntimeRules) else { throw ValidationError("--max-runtime-rules must be from 0 to 1000000") }
        guard (0...1_000_000).contains(maxRuntimeRulesPerSession) else {
            throw ValidationError("--max-runtime-rules-per-session must be from 0 to 1000000")
        }
        guard (0...(1 << 40)).contains(maxRuntimeRuleBytes) else {
            throw ValidationError("--max-runtime-rule-bytes must be from 0 to 1099511627776")
        }
        try grace.check("--grace")
        try watchSettle.check("--watch-settle")
        for (flag, name) in [("--session-header", sessionHeader), ("--rule-header", ruleHeader)] {
            guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_".contains($0)) }) else {
                throw ValidationError("\(flag) must be a header name (letters, digits, '-' and '_')")
            }
        }
    }

    /// These options as arguments of `serve`, each written from its parsed value: what `start`
    /// hands the server it starts. Every option is written (as `--name=value`, so a value that
    /// starts with '-' stays a value) except an unset optional one and a flag that is off. A new
    /// option must be added here: the command line tests compare what `start` hands over with
    /// every option `serve --experimental-dump-help` lists.
    var arguments: [String] {
        var arguments: [String] = []
        func add(_ name: String, _ value: CustomStringConvertible?) {
            if let value { arguments.append("--\(name)=\(value)") }
        }
        add("scenarios", scenarioOptions.given)
        add("host", host)
        add("port", port)
        add("admin-port", adminPort)
        add("port-file", portFile)
        add("threads", threads)
        add("event-loop", eventLoop.rawValue)
        add("max-body", maxBody)
        add("max-header-size", maxHeaderSize)
        add("connection-limit", connectionLimit)
        add("connection-timeout", connectionTimeout)
        add("head-timeout", headTimeout)
        add("log-level", logLevel.rawValue)
        add("log-format", logFormat.rawValue)
        add("seed", seed)
        add("session-header", sessionHeader)
        add("rule-header", ruleHeader)
        add("journal-size", journalSize)
        add("max-sessions", maxSessions)
        add("session-prefix", sessionPrefix)
        add("max-runtime-rules", maxRuntimeRules)
        add("max-runtime-rules-per-session", maxRuntimeRulesPerSession)
        add("max-runtime-rule-bytes", maxRuntimeRuleBytes)
        add("openapi", openAPI)
        if noAdmin { arguments.append("--no-admin") }
        add("admin-token", adminTokenOption)
        for name in adminHosts { add("admin-host", name) }
        for origin in adminOrigins { add("admin-origin", origin) }
        add("cors", cors)
        add("network", network)
        add("watch", watch.rawValue)
        add("watch-settle", watchSettle)
        add("grace", grace)
        add("pid-file", pidFile)
        add("ready-fd", readyDescriptor)
        return arguments + tlsOptions.arguments + upstreamOptions.arguments
    }
}

extension LineLogHandler.Format: ExpressibleByArgument, NamedChoices {}
extension MishapInstance.WatchMode: ExpressibleByArgument, NamedChoices {}
extension ServerConfiguration.EventLoop: ExpressibleByArgument, NamedChoices {}

// swift-format-ignore: AvoidRetroactiveConformances
// (swift-log's level read by swift-argument-parser: neither library can declare it)
extension Logger.Level: @retroactive ExpressibleByArgument, NamedChoices {}

/// An option's choices named by their raw values, spelled out. ArgumentParser's defaults
/// reach the same strings through key paths and string interpolation of a generic value,
/// about 1.7 million instructions at every start of `serve` for one enum of three cases.
public protocol NamedChoices: CaseIterable, RawRepresentable where RawValue == String {}

extension NamedChoices where Self: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }
    public var defaultValueDescription: String { rawValue }
    public static var defaultCompletionKind: CompletionKind { .list(allValueStrings) }
}
