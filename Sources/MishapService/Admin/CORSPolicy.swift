import MishapEngine
import MishapSupport

/// Cross-origin resource sharing, for web front-ends (`--cors ORIGINS`): browsers send a page's
/// requests to another origin only when the server says they may. When on, Mishap answers
/// preflights (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) for every path a
/// scenario endpoint serves, and adds `Access-Control-Allow-Origin` to every answer to an allowed
/// origin, faults aside (a reset or a dropped connection has no headers to carry it). HTTP
/// semantics, not scenario matching: the engine knows nothing of it, and it costs nothing off.
public struct CORSPolicy: Sendable, Equatable {
    /// Every origin (`*`), or these exactly (`http://localhost:3000`).
    public enum Origins: Sendable, Equatable {
        case any
        case listed(Set<String>)
    }

    public let origins: Origins
    /// How long a browser may cache a preflight's answer, in seconds.
    public static let maxAgeSeconds = 600

    public init(origins: Origins) {
        self.origins = origins
    }

    /// Parses `--cors`: `*`, or origins separated by commas (`scheme://host[:port]`, as browsers
    /// send them, without a path). Throws a message naming what is wrong.
    public init(parsing text: String) throws(CORSPolicyError) {
        let items = text.split(separator: ",").map { String($0.trimmingASCIIWhitespace()) }.filter { !$0.isEmpty }
        if items == ["*"] {
            self.init(origins: .any)
            return
        }
        guard !items.isEmpty else { throw CORSPolicyError(message: "--cors needs '*' or a list of origins, such as http://localhost:3000") }
        for item in items {
            if item == "*" { throw CORSPolicyError(message: "--cors: '*' cannot be listed with other origins") }
            let scheme = item.hasPrefix("http://") ? "http://" : item.hasPrefix("https://") ? "https://" : nil
            guard let scheme else {
                throw CORSPolicyError(message: "--cors: '\(item)' is not an origin: it must start with http:// or https:// (http://localhost:3000)")
            }
            let rest = item.dropFirst(scheme.count)
            guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("#") else {
                throw CORSPolicyError(message: "--cors: '\(item)' is not an origin: an origin is scheme://host[:port], without a path")
            }
        }
        self.init(origins: .listed(Set(items)))
    }

    /// The value of `Access-Control-Allow-Origin` for `origin`, or nil when it is not allowed.
    func allowedOrigin(_ origin: String) -> String? {
        switch origins {
        case .any: return "*"
        case .listed(let listed): return listed.contains(origin) ? origin : nil
        }
    }

    /// The answer to a preflight, or nil when `request` is not one (then it is answered as usual).
    /// `methods` are those the scenarios serve at the request's path; none: not ours to answer.
    func preflight(_ request: Request, methods: [String]) -> ResponsePlan? {
        guard request.method == "OPTIONS", let origin = request.headerValue("Origin"),
              request.headerValue("Access-Control-Request-Method") != nil, !methods.isEmpty else { return nil }
        guard let allowed = allowedOrigin(origin) else {
            var plan = ResponsePlan.error(403, reason: "CORS: origin '\(origin)' is not allowed (mishap --cors lists the origins it allows)")
            plan.headers.append(Field("Vary", "Origin"))
            return plan
        }
        var served = methods.contains("ANY") ? ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] : methods
        if served.contains("GET") && !served.contains("HEAD") { served.append("HEAD") }
        var headers = [
            Field("Access-Control-Allow-Origin", allowed),
            Field("Access-Control-Allow-Methods", served.joined(separator: ", ")),
            Field("Access-Control-Max-Age", String(Self.maxAgeSeconds)),
            Field("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"),
        ]
        if let asked = request.headerValue("Access-Control-Request-Headers"), !asked.isEmpty {
            headers.append(Field("Access-Control-Allow-Headers", asked))
        }
        if allowed != "*" { headers.append(Field("Access-Control-Allow-Credentials", "true")) }
        return ResponsePlan(status: 204, headers: headers, body: [])
    }

    /// `plan` with the CORS headers an allowed `origin` needs to read it: the origin, `Vary`, the
    /// response's own headers exposed to scripts (`Retry-After`, `WWW-Authenticate`), and
    /// credentials for a listed origin. A fault's plan is left alone.
    func decorate(_ plan: ResponsePlan, origin: String) -> ResponsePlan {
        guard plan.fault == nil, let allowed = allowedOrigin(origin) else { return plan }
        var decorated = plan
        decorated.prepared = nil
        let exposed = plan.headers.map(\.name).filter { !Self.safelisted.contains($0.lowercased()) }
        decorated.headers.append(Field("Access-Control-Allow-Origin", allowed))
        if allowed != "*" {
            decorated.headers.append(Field("Access-Control-Allow-Credentials", "true"))
            decorated.headers.append(Field("Vary", "Origin"))
        }
        if !exposed.isEmpty { decorated.headers.append(Field("Access-Control-Expose-Headers", exposed.joined(separator: ", "))) }
        return decorated
    }

    /// An upstream's answer (`--upstream`, a rule's `proxy`) decorated for `origin`: when Mishap
    /// allows the origin, the upstream's own `Access-Control-Allow-Origin`, `-Allow-Credentials`
    /// and `-Expose-Headers` give way to Mishap's, so exactly one of each goes out (two
    /// `Access-Control-Allow-Origin` headers make browsers fail the request). Its other CORS
    /// headers (the methods and headers of a preflight it answers) stay. An origin Mishap does not
    /// allow gets the upstream's answer as it came.
    func decorateUpstream(_ plan: ResponsePlan, origin: String) -> ResponsePlan {
        guard plan.fault == nil, allowedOrigin(origin) != nil else { return plan }
        var own = plan
        own.headers.removeAll { Self.replacedOnUpstreamAnswers.contains($0.name.lowercased()) }
        return decorate(own, origin: origin)
    }

    /// The headers of an upstream's answer that Mishap's own replace (`decorateUpstream`).
    static let replacedOnUpstreamAnswers: Set<String> = [
        "access-control-allow-origin", "access-control-allow-credentials", "access-control-expose-headers",
    ]

    /// Response headers scripts may read without being exposed (the CORS-safelisted ones).
    static let safelisted: Set<String> = [
        "cache-control", "content-language", "content-length", "content-type", "expires", "last-modified", "pragma",
    ]
}

/// A `--cors` value that is not `*` or a list of origins.
public struct CORSPolicyError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

