import MishapEngine

// `quota:` on a rule or an endpoint: at most `limit` requests per `window`, then 429 with
// `Retry-After` and the rate-limit headers.
extension FileCompiler {
    static let quotaKeys = ["limit", "window", "per", "retryAfter", "headers", "respond"]
    /// The most requests a quota window may hold: each one let through is remembered until it
    /// leaves the window.
    static let maximumQuotaLimit = 100_000

    /// A quota; `stateKey` identifies its counts across reloads (an unchanged quota keeps them).
    mutating func compileQuota(_ node: YAMLNode, stateKey: String) -> Quota? {
        guard let keyed = mapping(node, allowedKeys: Self.quotaKeys, what: "'quota'") else { return nil }
        var valid = true
        guard let limitNode = keyed["limit"], let windowNode = keyed["window"] else {
            error("'quota' needs 'limit' (requests) and 'window' (a duration): {limit: 5, window: 10s}", at: node)
            return nil
        }
        let limit = integer(limitNode, what: "'limit'", in: 1...Self.maximumQuotaLimit, expected: "from 1 to \(Self.maximumQuotaLimit)")
        var window = duration(windowNode, what: "'window'")
        if window == 0 {
            error("'window' must be longer than 0", at: windowNode)
            window = nil
        }
        var key = Quota.Key.session
        if let perNode = keyed["per"], let per = string(perNode, what: "'per'") {
            if per == "session" {
                key = .session
            } else if per.hasPrefix("headers."), per.count > 8 {
                key = .value(.header(String(per.dropFirst(8))))
            } else if per.hasPrefix("query."), per.count > 6 {
                key = .value(.query(String(per.dropFirst(6))))
            } else {
                error("'per' must be session, headers.NAME or query.NAME, not '\(shown(per))'", at: perNode)
                valid = false
            }
        } else if keyed["per"] != nil {
            valid = false
        }
        var retryAfterDate = false
        if let retryNode = keyed["retryAfter"], let form = string(retryNode, what: "'retryAfter'") {
            switch form {
            case "seconds": retryAfterDate = false
            case "date": retryAfterDate = true
            default:
                error("'retryAfter' must be seconds or date (an HTTP-date), not '\(shown(form))'", at: retryNode)
                valid = false
            }
        }
        var style = Quota.HeaderStyle.classic
        if let styleNode = keyed["headers"], let name = string(styleNode, what: "'headers'") {
            if let chosen = Quota.HeaderStyle(rawValue: name) {
                style = chosen
            } else {
                let names = Quota.HeaderStyle.allCases.map(\.rawValue)
                error("'headers' must be one of \(names.joined(separator: ", "))\(hint(for: name, in: names)), not '\(shown(name))'", at: styleNode)
                valid = false
            }
        }
        var exceeded: ResponseTemplate?
        if let respond = keyed["respond"] {
            exceeded = compileResponse(respond, defaultStatus: 429)
            if exceeded == nil { valid = false }
        }
        guard valid, let limit, let window else { return nil }
        let counter = previousQuotas[stateKey] ?? QuotaCounter()
        quotaCounters[stateKey] = counter
        return Quota(limit: limit, windowMilliseconds: window, key: key, retryAfterDate: retryAfterDate, headerStyle: style,
                     exceeded: exceeded, counter: counter)
    }
}
