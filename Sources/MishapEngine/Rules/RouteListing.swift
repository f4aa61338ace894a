/// The endpoints and their rules in match order, as `mishap routes` prints them: each rule with
/// its aliases, when it answers in brief, and what it answers.
///
/// ```text
/// GET /isUserNameAvailable  (scenarios/isUserNameAvailable.yaml:58)
///   serverError  query.userName = servererror  -> 500
/// ```
public enum RouteListing {
    /// The lines for `endpoints`, each titled by `title` (by default the endpoint and its source).
    public static func lines(_ endpoints: [Endpoint], title: (Endpoint) -> String = { "\($0.name)  (\($0.source ?? "?"))" }) -> [String] {
        var lines: [String] = []
        for endpoint in endpoints {
            lines.append(title(endpoint))
            lines += ruleLines(endpoint.rules)
        }
        return lines
    }

    /// The lines for the rules added at runtime, in the order they are tried (a session's
    /// before those for every request, newest first), or none.
    public static func lines(_ runtime: [RuntimeRules.Entry], now: Int64) -> [String] {
        guard !runtime.isEmpty else { return [] }
        var lines = ["", "Rules added at runtime, tried before the files' (newest first):"]
        for entry in runtime.reversed() {
            var about = [entry.session.map { "session \($0)" } ?? "every request"]
            if let remaining = entry.remaining { about.append("\(remaining) answer(s) left") }
            if let expiresAt = entry.expiresAt { about.append("\(max(0, expiresAt - now) / 1000) s left") }
            let what = about.joined(separator: ", ")
            switch entry.kind {
            case .rules(let endpoints):
                lines += Self.lines(endpoints) { "\(entry.id): \($0.name)  (\(what))" }
            case .force(let endpoint, let rule):
                lines.append("\(entry.id): \(endpoint) answers with its rule \(rule)  (\(what))")
            }
        }
        return lines
    }

    static func ruleLines(_ rules: [Rule]) -> [String] {
        let names = rules.map(shownName)
        let triggers = rules.map { $0.triggerSummary() }
        let nameWidth = names.map(\.count).max() ?? 0
        let triggerWidth = triggers.map(\.count).max() ?? 0
        return rules.indices.map { index in
            "  " + padded(names[index], nameWidth) + "  " + padded(triggers[index], triggerWidth) + "  -> " + rules[index].answerSummary
        }
    }

    /// The rule's name, with its aliases in parentheses.
    static func shownName(_ rule: Rule) -> String {
        rule.aliases.isEmpty ? rule.name : "\(rule.name) (\(rule.aliases.joined(separator: ", ")))"
    }

    /// `text` padded with spaces to `width` characters.
    static func padded(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }
}

extension Rule {
    /// What the rule answers, in brief: `500`, `200 after 1500-3000 ms`, `fault reset`,
    /// `cycle 500, 500, pass`; with its quota and the state it sets.
    public var answerSummary: String {
        var text: String
        switch action {
        case .respond(let response):
            text = response.summary
        case .cycle(let steps, _):
            text = "cycle " + steps.map { step -> String in
                if case .respond(let response) = step { return response.summary }
                return "pass"
            }.joined(separator: ", ")
        }
        if let quota { text += ", at most \(quota.limit) per \(Quota.shown(milliseconds: quota.windowMilliseconds))" }
        if !effects.isEmpty { text += ", sets state" }
        return text
    }
}

extension ResponseTemplate {
    /// The response in brief: its status and how it is delivered.
    var summary: String {
        if hang { return "hang" }
        if let fault { return "fault \(fault.rawValue)" }
        var text = "\(status)"
        switch delay {
        case .fixed(let milliseconds)?: text += " after \(milliseconds) ms"
        case .uniform(let range)?: text += " after \(range.lowerBound)-\(range.upperBound) ms"
        case nil: break
        }
        if let dribble { text += " in \(dribble.chunks) pieces over \(dribble.milliseconds) ms" }
        return text
    }
}
