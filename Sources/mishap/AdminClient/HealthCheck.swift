/// What a server's health endpoint (`GET /__mishap/health`) says of it, Mishap's answers told
/// apart from anything else's.
enum Health: Equatable {
    /// 200 with Mishap's health object: serving.
    case serving
    /// 401 with Mishap's `WWW-Authenticate`: serving, with an admin token that was not given
    /// (`given` false) or not this one.
    case needsToken(given: Bool)
    /// 403 with Mishap's error body: serving, its admin API refusing this call, for the reason
    /// given (a client on another machine without the token, a `Host` not its own).
    case refused(String)
    /// Something answered, not as Mishap does: what.
    case other(String)

    /// Whether Mishap serves there.
    var isServing: Bool {
        switch self {
        case .serving, .needsToken, .refused: true
        case .other: false
        }
    }

    /// The sentence `status` prints.
    func sentence(url: String) -> String {
        switch self {
        case .serving:
            "mishap is serving at \(url)"
        case .needsToken(given: false):
            "mishap is serving at \(url); its admin API needs the admin token (--admin-token or MISHAP_ADMIN_TOKEN) to say more"
        case .needsToken(given: true):
            "mishap is serving at \(url), but its admin API refused the admin token given"
        case .refused(let reason):
            "mishap is serving at \(url); its admin API refused the call: \(reason)"
        case .other(let what):
            "mishap is not serving at \(url): \(what)"
        }
    }
}

/// Asks the server at `url` for its health: for `status`, container health checks and
/// readiness waits, where no HTTP client may be installed. A failure is nothing answering.
func healthCheck(url: String, token: String? = nil, timeoutMilliseconds: Int32 = 3000) -> Result<Health, AdminCallFailure> {
    let target = "/__mishap/health"
    return adminExchange(url: url, token: token, target: target, timeoutMilliseconds: timeoutMilliseconds).map { answer in
        switch answer.status {
        case 200 where answer.body.hasPrefix(#"{"status":"ok""#):
            return .serving
        case 401 where answer.header("WWW-Authenticate")?.contains(#"realm="mishap admin""#) == true:
            return .needsToken(given: token != nil)
        case 403 where answer.body.hasPrefix(#"{"error":true"#):
            return .refused(errorReason(answer.body) ?? "403")
        default:
            return .other("\(url)\(target) answered \(answer.status), not as mishap does")
        }
    }
}

/// The `reason` of Mishap's error body (`{"error":true,"reason":"..."}`), its `\"` and `\\`
/// read back; nil when there is none.
func errorReason(_ body: String) -> String? {
    guard let start = body.firstRange(of: #""reason":""#) else { return nil }
    var reason = ""
    var escaped = false
    for character in body[start.upperBound...] {
        if escaped {
            reason.append(character)
            escaped = false
        } else if character == "\\" {
            escaped = true
        } else if character == "\"" {
            return reason
        } else {
            reason.append(character)
        }
    }
    return nil
}
