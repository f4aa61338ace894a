import MishapEngine
import Synchronization

/// Keeps Mishap from proxying to itself. A `proxy` rule or `--upstream` that points at Mishap
/// would send each request back in, again and again, until the connections run out (and, with
/// `--cors '*'`, would let any page read the admin API through it). Three guards:
///
/// - a target that is this server by its address (a loopback name or address, or the address
///   it is bound to, with one of its ports) is refused before anything is sent: `508 Loop
///   Detected`, or a refused runtime rule;
/// - every request sent on carries `Via: 1.1 mishap-TOKEN`, TOKEN being this instance's own
///   random one; a request that arrives carrying it came back through some other name, and is
///   answered 508 before anything else (the admin API included) sees it;
/// - a request that has passed `maximumHops` proxies is not sent on again.
final class ProxyLoopGuard: Sendable {
    /// This instance's name in `Via`: `mishap-` and 16 random hexadecimal digits.
    let token: String
    /// The `Via` entry this instance adds to what it sends on.
    let viaEntry: String
    /// Set once a request has been sent on: before that, no request can carry the token, and
    /// arriving requests are not searched for it.
    private let armed = Atomic<Bool>(false)
    /// Where this server listens: the address it is bound to, and its HTTP and HTTPS ports.
    private let listening = Mutex<(host: String, ports: [UInt16])?>(nil)
    /// The most `Via` entries a request may carry and still be sent on.
    static let maximumHops = 16

    init() {
        var generator = SystemRandomNumberGenerator()
        let hex = String(generator.next() as UInt64, radix: 16)
        token = "mishap-" + String(repeating: "0", count: 16 - hex.count) + hex
        viaEntry = "1.1 " + token
    }

    /// Tells the guard where the server listens, once it does.
    func listen(host: String, ports: [UInt16]) {
        listening.withLock { $0 = (host, ports.filter { $0 != 0 }) }
    }

    /// Notes that requests are being sent on: from now on arriving requests are checked.
    func arm() {
        if !armed.load(ordering: .relaxed) { armed.store(true, ordering: .relaxed) }
    }

    /// Whether this instance has sent a request on: until then no arriving request can carry
    /// its token, and none is searched for it (one relaxed load on every request).
    var isArmed: Bool { armed.load(ordering: .relaxed) }

    /// The 508 for a request that came back to this instance through its own proxying, or nil.
    func refusal(for request: Request) -> ResponsePlan? {
        for field in request.headers where field.name.equalsIgnoringASCIICase("Via") && field.value.contains(token) {
            return .error(508, reason: "this request came back to the Mishap that sent it on (Via: \(field.value)): a proxy rule "
                + "or --upstream points at Mishap itself, under a name or address that leads back to it; refused instead of looping")
        }
        return nil
    }

    /// Why sending `request` on to `url` would loop, or nil: the URL is this server's, or the
    /// request has passed too many proxies already.
    func problem(sending request: Request, to url: String) -> String? {
        if let problem = problem(with: url) { return problem }
        let hops = request.headers.filter { $0.name.equalsIgnoringASCIICase("Via") }
            .reduce(0) { $0 + $1.value.split(separator: ",").count }
        if hops >= Self.maximumHops {
            return "the request has passed \(hops) proxies (Via), at most \(Self.maximumHops - 1) may come before Mishap sends it on"
        }
        return nil
    }

    /// Why `url`, an upstream's base URL, is this server itself, or nil (also while it is not
    /// known where the server listens).
    func problem(with url: String) -> String? {
        guard let listening = listening.withLock({ $0 }), let authority = ProxyTarget.authority(of: url),
              listening.ports.contains(authority.port) else { return nil }
        let host = authority.host
        let bound = listening.host.lowercased()
        guard ProxyTarget.isLoopback(host: host) || host == bound || host == "[\(bound)]" else { return nil }
        return "points at this Mishap itself (\(url) is where it listens): requests would come back to it and loop"
    }
}
