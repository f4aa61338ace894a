import MishapEngine
import MishapSupport

/// How a request is passed on to the upstream server and its answer passed back, as a proxy
/// does it (RFC 9110, section 7.6): hop-by-hop headers stay on their hop, `Host` becomes the
/// upstream's, and `X-Forwarded-For`, `-Host` and `-Proto` say where the request came from.
public enum Forwarding {
    /// The headers that belong to one connection, not to the message (RFC 9110 7.6.1, and the
    /// older `Keep-Alive` and `Proxy-Connection`); those a `Connection` header names are too.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authorization",
    ]

    /// The call that passes `request` on to `upstream` (a base URL: `http://host:port`, with a
    /// path prefix or not): its path and query appended, its headers less the hop-by-hop ones,
    /// `Host` and `Content-Length` (libcurl writes those), with `X-Forwarded-*` added for a
    /// client at `client` (an address) that reached Mishap over `scheme`, and `via` (this
    /// Mishap's entry) after any `Via` the request had.
    ///
    /// The URL's path is the base's and, under it, the request's path without dot segments (RFC
    /// 3986 section 5.2.4), whatever the request's path holds: a request never climbs out of the
    /// base (`/a/../../admin` under `http://up/api` is `http://up/api/admin`).
    public static func call(for request: Request, upstream: String, client: String, scheme: String, via: String? = nil) -> UpstreamCall {
        var url = upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream
        let path = request.path.hasPrefix("/") ? request.path : "/" + request.path
        url += percentEncoded(DotSegments.removed(from: path), keeping: pathCharacters)
        if !request.query.isEmpty {
            url += "?" + request.query.map {
                percentEncoded($0.name, keeping: queryCharacters) + "=" + percentEncoded($0.value, keeping: queryCharacters)
            }.joined(separator: "&")
        }
        let dropped = droppedNames(request.headers).union(["host", "content-length", "x-forwarded-host", "x-forwarded-proto"])
        var headers: [(name: String, value: String)] = []
        var forwardedFor: String?
        for field in request.headers {
            let name = field.name.lowercased()
            if name == "x-forwarded-for" {
                forwardedFor = forwardedFor.map { "\($0), \(field.value)" } ?? field.value
            } else if !dropped.contains(name) {
                headers.append((field.name, field.value))
            }
        }
        headers.append(("X-Forwarded-For", forwardedFor.map { "\($0), \(client)" } ?? client))
        if let host = request.headerValue("Host") { headers.append(("X-Forwarded-Host", host)) }
        headers.append(("X-Forwarded-Proto", scheme))
        if let via { headers.append(("Via", via)) }
        return UpstreamCall(method: request.method, url: url, headers: headers, body: request.body)
    }

    /// The plan that passes an upstream's answer back (less its hop-by-hop headers, and the
    /// `Date` and `Content-Length` the server writes itself), or, without one, a JSON error:
    /// 504 when the upstream took too long, 502 otherwise.
    /// For a `HEAD` request (`head`), the upstream's `Content-Length` is kept: it describes the
    /// body a `GET` would get, which the server declares without sending
    /// (`ResponsePlan.declaredLength`).
    public static func plan(for result: UpstreamResult, upstream: String, head: Bool = false) -> ResponsePlan {
        switch result {
        case .answered(let status, let headers, let body, _):
            var kept = passedBack(headers.map { Field($0.name, $0.value) })
            if head, let length = headers.last(where: { $0.name.equalsIgnoringASCIICase("content-length") }) {
                kept.append(Field("Content-Length", length.value))
            }
            return ResponsePlan(status: status, headers: kept, body: body)
        case .failed(let failure, _):
            let status = failure.kind == .timeout ? 504 : 502
            if failure.kind == .memory || failure.kind == .malformed {
                return .error(status, reason: "the answer of the upstream \(upstream) was not passed on (\(failure.kind.rawValue)): \(failure.message)")
            }
            return .error(status, reason: "the upstream \(upstream) gave no answer (\(failure.kind.rawValue)): \(failure.message)")
        }
    }

    /// The headers of an upstream's answer that are passed back: all but the hop-by-hop ones and
    /// the `Date` and `Content-Length` the server writes itself, in order.
    public static func passedBack(_ headers: [Field]) -> [Field] {
        let dropped = droppedNames(headers).union(["content-length", "date"])
        return headers.filter { !dropped.contains($0.name.lowercased()) }
    }

    /// `answer` (the upstream's, or the error for its lack) from `upstream`, delivered as
    /// `rulePlan`, the plan of the rule that sent the request on (`proxy`), asks: with its
    /// headers (in place of the upstream's of the same names), delay, dribble and fault, and its
    /// bookkeeping (endpoint, rule, journal entry), with the upstream, for the journal and the
    /// log. The `garbage` fault sends the upstream's body, or the rule's random bytes when that
    /// is empty.
    public static func delivered(_ answer: ResponsePlan, from upstream: String, as rulePlan: ResponsePlan) -> ResponsePlan {
        var plan = answer
        if !rulePlan.headers.isEmpty {
            plan.headers.removeAll { field in rulePlan.headers.contains { $0.name.equalsIgnoringASCIICase(field.name) } }
            plan.headers += rulePlan.headers
        }
        plan.delayMilliseconds = rulePlan.delayMilliseconds
        plan.dribble = rulePlan.dribble
        plan.fault = rulePlan.fault
        if plan.fault == .garbage && plan.body.isEmpty { plan.body = rulePlan.body }
        plan.bookkeeping = rulePlan.bookkeeping
        plan.bookkeeping.upstream = upstream
        return plan
    }

    /// The hop-by-hop header names, and those `headers`' `Connection` names, lowercased.
    static func droppedNames(_ headers: [Field]) -> Set<String> {
        var names = hopByHop
        for field in headers where field.name.equalsIgnoringASCIICase("connection") {
            for token in field.value.split(separator: ",") {
                names.insert(token.trimmingASCIIWhitespace().lowercased())
            }
        }
        return names
    }

    /// Bytes a path keeps as they are: unreserved, sub-delimiters, `:`, `@` and `/` (RFC 3986).
    static let pathCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*,;=:@/&+".utf8)
    /// Bytes a query name or value keeps: as in a path, less `&`, `=`, `+` and `;`, which would
    /// change how the query splits.
    static let queryCharacters = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$'()*,:@/?".utf8)

    /// `text` with every UTF-8 byte outside `keeping` written as `%XX`.
    static func percentEncoded(_ text: String, keeping: Set<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keeping.contains(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
