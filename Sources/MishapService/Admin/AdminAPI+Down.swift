import MishapEngine
import MishapHTTP
import MishapSupport
import Synchronization

/// `/__mishap/down`: takes the serving port down for a while, so new connections are refused
/// (docs/refused-connections.md). `POST ?for=5s` goes down (a bare number is seconds; at most a
/// day; a second call while down replaces the end), `GET` says whether it is down and until
/// when, `DELETE` brings it back at once. Only with an admin port (`--admin-port`): without one
/// the admin API would go down with the port, and `POST` is refused with 409.
extension AdminAPI {
    func down(_ request: Request) -> ResponsePlan {
        let ports = ServingPorts.of(service)
        if request.method != "POST", request.queryValue("for") != nil {
            return Self.error(400, "'for' goes with POST (to go down); \(request.method) takes no parameters")
        }
        switch request.method {
        case "POST":
            guard let ports, ports.adminServer != nil else {
                return Self.error(409, "the serving port cannot go down without an admin port: the admin API would go down "
                    + "with it, and nothing could bring it back early; start Mishap with --admin-port PORT")
            }
            guard let text = request.queryValue("for") else {
                return Self.error(400, "'for' is missing: how long the port stays down, in seconds (5, 0.5) or with a unit (500ms, 5s, 2m)")
            }
            guard case .success(let milliseconds) = DurationText.milliseconds(text, bare: .seconds), milliseconds > 0 else {
                return Self.error(400, "'for' must be a duration over 0 and at most a day: seconds (5, 0.5) or with a unit (500ms, 5s, 2m, 1h)")
            }
            do {
                try ports.server.goDown(forMilliseconds: milliseconds)
            } catch {
                return Self.error(409, "\(error)")
            }
            return Self.json(200, Self.downState(ports))
        case "DELETE":
            // Nothing to bring back on a server that cannot go down, or is up: the state, as GET.
            if let ports, ports.server.canGoDown, ports.server.isDown {
                do {
                    try ports.server.comeBack()
                } catch {
                    return Self.error(503, "\(error)")
                }
            }
            return Self.json(200, ports.map(Self.downState) ?? Self.upState(adminPort: nil))
        default:
            return Self.json(200, ports.map(Self.downState) ?? Self.upState(adminPort: nil))
        }
    }

    /// `{"down": true, "until": "…", "remainingMilliseconds": 4998, "port": 8080, "adminPort": 9090}`.
    static func downState(_ ports: ServingPorts.Ports) -> JSON {
        let adminPort = ports.adminServer?.port.map { JSON.int(Int($0)) } ?? .null
        guard ports.server.isDown, let remaining = ports.server.downRemaining else {
            return .object([("down", .bool(false)), ("port", ports.server.port.map { .int(Int($0)) } ?? .null),
                            ("adminPort", adminPort)])
        }
        let milliseconds = Int(remaining / .milliseconds(1))
        return .object([
            ("down", .bool(true)),
            ("until", .string(WallClock.iso8601(milliseconds: WallClock.nowMilliseconds() + Int64(milliseconds)))),
            ("remainingMilliseconds", .int(milliseconds)),
            ("port", ports.server.port.map { .int(Int($0)) } ?? .null),
            ("adminPort", adminPort),
        ])
    }

    static func upState(adminPort: UInt16?) -> JSON {
        .object([("down", .bool(false)), ("adminPort", adminPort.map { .int(Int($0)) } ?? .null)])
    }
}

/// The serving server and the admin port's of each running service, so the admin API can take
/// the serving port down (`MishapInstance` registers them as it starts, and removes them as it
/// stops).
enum ServingPorts {
    /// A service's servers, held weakly: an instance dropped without `stop` still stops them.
    struct Entry: Sendable {
        weak var service: MishapService?
        weak var weakServer: HTTPServer?
        weak var adminServer: HTTPServer?
    }

    /// The servers of a running service: the serving one, and the admin port's when there is one.
    struct Ports {
        let server: HTTPServer
        let adminServer: HTTPServer?
    }

    private static let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    static func register(_ service: MishapService, server: HTTPServer, adminServer: HTTPServer?) {
        entries.withLock { entries in
            entries = entries.filter { $0.value.service != nil }  // those of instances dropped unstopped
            entries[ObjectIdentifier(service)] = Entry(service: service, weakServer: server, adminServer: adminServer)
        }
    }

    static func unregister(_ service: MishapService) {
        _ = entries.withLock { $0.removeValue(forKey: ObjectIdentifier(service)) }
    }

    /// The servers of `service`, when it runs in a `MishapInstance`.
    static func of(_ service: MishapService) -> Ports? {
        entries.withLock { entries in
            guard let entry = entries[ObjectIdentifier(service)], entry.service === service,
                  let server = entry.weakServer else { return nil }
            return Ports(server: server, adminServer: entry.adminServer)
        }
    }
}

/// What the admin port answers: the admin API and the dashboard (`/__mishap/`), as the serving
/// port does; any other path gets a 404 saying where the scenarios are served.
struct AdminPortResponder: Responder {
    let service: MishapService

    func respond(to request: Request) -> ResponsePlan {
        guard request.path.hasPrefix(AdminAPI.prefix) else {
            return AdminAPI.error(404, "this is the admin port: it serves the admin API and the dashboard under "
                + "\(AdminAPI.prefix) only; the scenarios are served on the serving port")
        }
        return service.respond(to: request)
    }
}
