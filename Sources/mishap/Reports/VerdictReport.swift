/// A verdict of `GET /__mishap/verdict` as the command line shows it: a line per check, the
/// overall line, the evidence of the checks that failed; and as JUnit test cases.
struct VerdictReport {
    struct Check {
        var name: String
        /// true, false, or nil: nothing to judge (or the evidence was lost; the summary says which).
        var passed: Bool?
        var summary: String
        var evidence: [Evidence]
    }

    struct Evidence {
        var id: Int?
        var at: String?
        var request: String
        var answer: String
        var rule: String?
        var waitedMilliseconds: Double?
        var note: String?

        /// One short line: `#3 16:00:00.123 GET /x → 500 (rule maintenance), waited 3.0 s: note`.
        var line: String {
            var text = id.map { "#\($0) " } ?? ""
            if let at { text += Self.timeOfDay(at) + " " }
            text += Self.shortened(request, to: 80) + " → " + answer
            if let rule { text += " (rule \(rule))" }
            if let waitedMilliseconds { text += ", waited " + VerdictReport.secondsText(waitedMilliseconds) }
            if let note, !note.isEmpty { text += ": " + note }
            return text
        }

        /// The time of day of an ISO 8601 time (`2026-11-27T16:00:00.123Z` → `16:00:00.123`).
        static func timeOfDay(_ iso: String) -> String {
            guard let t = iso.firstIndex(of: "T") else { return iso }
            var rest = iso[iso.index(after: t)...]
            if rest.hasSuffix("Z") { rest = rest.dropLast() }
            return String(rest)
        }

        static func shortened(_ text: String, to length: Int) -> String {
            text.count <= length ? text : String(text.prefix(length - 1)) + "…"
        }
    }

    var session: String?
    var passed: Bool
    var endpoint: String?
    var attempts: Int?
    var grouping: String?
    var checks: [Check]

    /// Reads the server's JSON; nil when it is not a verdict.
    init?(json text: String) {
        guard let root = JSONReading.parse(text), let passed = root["passed"]?.bool, let checks = root["checks"]?.array else { return nil }
        self.session = root["session"]?.string
        self.passed = passed
        self.endpoint = root["endpoint"]?.string
        self.attempts = root["attempts"]?.number.map { Int($0) }
        self.grouping = root["grouping"]?.string
        var read: [Check] = []
        for check in checks {
            guard let name = check["name"]?.string else { return nil }
            let evidence = (check["evidence"]?.array ?? []).map { item in
                Evidence(id: item["id"]?.number.map { Int($0) }, at: item["at"]?.string,
                         request: item["request"]?.string ?? "", answer: item["answer"]?.string ?? item["answer"]?.number.map { String(Int($0)) } ?? "",
                         rule: item["rule"]?.string, waitedMilliseconds: item["waitedMs"]?.number, note: item["note"]?.string)
            }
            read.append(Check(name: name, passed: check["passed"]?.bool, summary: check["summary"]?.string ?? "", evidence: evidence))
        }
        self.checks = read
    }

    var failedChecks: [Check] { checks.filter { $0.passed == false } }

    /// The mark of a check's line.
    static func mark(_ passed: Bool?) -> String {
        switch passed {
        case true?: return "✓"
        case false?: return "✗"
        case nil: return "–"
        }
    }

    /// Milliseconds as seconds for a person: `1.2 s`, `17 s`, `350 ms`.
    static func secondsText(_ milliseconds: Double) -> String {
        if milliseconds < 1000 { return "\(Int(milliseconds.rounded())) ms" }
        let tenths = Int((milliseconds / 100).rounded())
        return tenths >= 100 ? "\(Int((milliseconds / 1000).rounded())) s" : "\(tenths / 10).\(tenths % 10) s"
    }

    /// How many evidence lines a failed check shows; the rest are counted.
    static let evidenceShown = 5

    /// The lines for a person: one per check (mark, name, summary), the evidence of each failed
    /// check indented under it, then the overall line.
    var lines: [String] {
        let width = checks.map(\.name.count).max() ?? 0
        var out: [String] = []
        for check in checks {
            let summary = Self.oneLine(check.summary)
            out.append("\(Self.mark(check.passed)) \(Self.oneLine(check.name))\(String(repeating: " ", count: width - check.name.count))  \(summary)")
            guard check.passed == false else { continue }
            for item in check.evidence.prefix(Self.evidenceShown) { out.append("      " + Self.oneLine(item.line)) }
            if check.evidence.count > Self.evidenceShown {
                out.append("      … and \(check.evidence.count - Self.evidenceShown) more (--json has them all)")
            }
        }
        out.append(Self.oneLine(overall))
        return out
    }

    /// `text` fit for one line of a terminal: line breaks and tabs made spaces, every other
    /// control character (an escape sequence's start among them) shown as U+FFFD.
    static func oneLine(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D: out += " "
            case 0x00..<0x20, 0x7F, 0x80..<0xA0: out.unicodeScalars.append("\u{FFFD}")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `FAILED: 2 of 7 checks (retryAfter, backoff); session s1, 5 attempts` or `PASSED: ...`.
    var overall: String {
        let failed = failedChecks
        let judged = checks.filter { $0.passed != nil }.count
        var scope = "session " + (session ?? "(requests without a session)")
        if let endpoint { scope += ", endpoint \(endpoint)" }
        if let attempts { scope += ", \(attempts) attempt\(attempts == 1 ? "" : "s")" }
        if passed {
            return "PASSED: \(judged) of \(checks.count) checks judged, none failed; \(scope)"
        }
        let names = failed.map(\.name).joined(separator: ", ")
        return "FAILED: \(failed.count) of \(checks.count) checks (\(names)); \(scope)"
    }

    /// A JUnit test case per check: failed with its summary, skipped when there was nothing to
    /// judge, passed otherwise.
    var junit: JUnitReport {
        let suite = "mishap verdict " + (session.map { "session \($0)" } ?? "without a session")
        let className = "mishap.verdict." + (session ?? "no-session")
        return JUnitReport(suiteName: suite, cases: checks.map { check in
            let outcome: JUnitReport.TestCase.Outcome
            switch check.passed {
            case true?: outcome = .passed
            case false?: outcome = .failed(message: check.summary, details: check.evidence.map(\.line).joined(separator: "\n"))
            case nil: outcome = .skipped(message: check.summary)
            }
            return JUnitReport.TestCase(name: check.name, className: className, outcome: outcome, seconds: nil,
                                        output: check.passed == true ? check.summary : nil)
        })
    }
}
