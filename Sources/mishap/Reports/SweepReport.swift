import MishapSupport

/// One run of `mishap sweep`: a rule forced, the command's ending, and what the server saw.
struct SweepRun {
    var rule: String
    var session: String
    /// nil when it could not be learnt (the wait failed).
    var ending: ChildCommand.Ending?
    var timedOut: Bool
    var seconds: Double
    /// The session's requests; nil when the count failed.
    var requests: Int?
    /// The server's verdict, as it sent it, and read.
    var verdictJSON: String?
    var verdict: VerdictReport?
    /// What went wrong asking the server (the run is not judged then).
    var problems: [String]

    /// The command exited 0 in time, and the verdict passed.
    var survived: Bool {
        !timedOut && ending == .exited(0) && verdict?.passed == true
    }

    /// The exit column: `0`, `1`, `SIGSEGV`, `timed out`.
    var exitText: String {
        if timedOut { return "timed out" }
        switch ending {
        case .exited(let status)?: return "\(status)"
        case .signalled(let signal)?: return ChildCommand.signalName(signal)
        case nil: return "unknown"
        }
    }

    /// What the client did, as the server saw it: `1 request`, `retried 2 times`, `gave up
    /// after 1.2 s` (how long it waited on a hung answer before closing, from the verdict's
    /// giveUp evidence).
    var clientDid: String {
        var parts: [String] = []
        switch requests {
        case nil: parts.append("requests unknown")
        case 0?: parts.append("made no request")
        case 1?: parts.append("1 request")
        case let count?: parts.append("retried \(count - 1) time\(count == 2 ? "" : "s")")
        }
        if let giveUp = verdict?.checks.first(where: { $0.name == "giveUp" }), giveUp.passed != nil,
           let waited = giveUp.evidence.compactMap(\.waitedMilliseconds).max() {
            parts.append("gave up after " + VerdictReport.secondsText(waited))
        }
        return parts.joined(separator: ", ")
    }

    /// The verdict column: `ok`, or the checks that failed.
    var verdictText: String {
        guard let verdict else { return "no verdict" }
        let failed = verdict.failedChecks.map(\.name)
        return failed.isEmpty ? "ok" : "✗ " + failed.joined(separator: ", ")
    }
}

/// The runs of a sweep as a table, JSON and JUnit.
struct SweepReport {
    var endpoint: String
    var timeoutMilliseconds: Int
    var runs: [SweepRun]

    var survived: Int { runs.filter(\.survived).count }

    /// The table: a header, a row per rule (✓ survived, ✗ not), then `survived N of M`.
    var lines: [String] {
        let header = ["", "rule", "exit", "requests", "client", "verdict"]
        let rows = runs.map { run in
            [run.survived ? "✓" : "✗", run.rule, run.exitText, run.requests.map(String.init) ?? "?", run.clientDid, run.verdictText]
        }
        let widths = header.indices.map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            var text = ""
            for (column, cell) in cells.enumerated() {
                if column > 0 { text += column == 1 ? " " : "  " }
                text += column == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            return String(text.reversed().drop { $0 == " " }.reversed())
        }
        var out = [line(header)] + rows.map(line)
        var last = "survived \(survived) of \(runs.count) failures of \(endpoint)"
        let failed = runs.filter { !$0.survived }.map(\.rule)
        if !failed.isEmpty { last += "; not: " + failed.joined(separator: ", ") }
        out.append(last)
        return out
    }

    /// `{"endpoint": ..., "survived": N, "runs": [{"rule": ..., "session": ..., "exitStatus": ...,
    /// "signal": ..., "timedOut": ..., "seconds": ..., "requests": ..., "survived": ..., "verdict": {...}}]}`,
    /// each verdict as the server sent it.
    var json: String {
        var out = "{\"endpoint\":" + JSONEscaping.quoted(endpoint) + ",\"survived\":\(survived),\"runs\":["
        for (index, run) in runs.enumerated() {
            if index > 0 { out += "," }
            var exitStatus = "null", signal = "null"
            switch run.ending {
            case .exited(let status)?: exitStatus = "\(status)"
            case .signalled(let number)?: signal = JSONEscaping.quoted(ChildCommand.signalName(number))
            case nil: break
            }
            out += "{\"rule\":" + JSONEscaping.quoted(run.rule) + ",\"session\":" + JSONEscaping.quoted(run.session)
            out += ",\"exitStatus\":\(exitStatus),\"signal\":\(signal),\"timedOut\":\(run.timedOut)"
            out += ",\"seconds\":" + JUnitReport.seconds(run.seconds)
            out += ",\"requests\":" + (run.requests.map(String.init) ?? "null")
            out += ",\"survived\":\(run.survived)"
            let verdict = run.verdictJSON.map { String($0.trimmingASCIIWhitespace()) } ?? "null"
            out += ",\"verdict\":" + verdict + "}"
        }
        return out + "]}"
    }

    /// A test case per rule: failed when the command did not exit 0 in time or the verdict
    /// failed, its message saying which, the failed checks' sentences and evidence as its text.
    var junit: JUnitReport {
        // `GET /x` as `GET_/x`, for a JUnit class name.
        let className = "mishap.sweep." + String(endpoint.map { $0 == " " ? "_" : $0 })
        return JUnitReport(suiteName: "mishap sweep \(endpoint)", cases: runs.map { run in
            var reasons: [String] = []
            if run.timedOut {
                reasons.append("still running after " + VerdictReport.secondsText(Double(timeoutMilliseconds)))
            } else if run.ending != .exited(0) {
                reasons.append("the command exited \(run.exitText)")
            }
            if let verdict = run.verdict {
                if !verdict.passed { reasons.append("the verdict failed " + verdict.failedChecks.map(\.name).joined(separator: ", ")) }
            } else {
                reasons.append("no verdict")
            }
            var details: [String] = run.problems
            for check in run.verdict?.failedChecks ?? [] {
                details.append("✗ \(check.name): \(check.summary)")
                details += check.evidence.map { "    " + $0.line }
            }
            let output = "session \(run.session); \(run.clientDid); exit \(run.exitText)"
            let outcome: JUnitReport.TestCase.Outcome = run.survived
                ? .passed : .failed(message: reasons.joined(separator: "; "), details: details.joined(separator: "\n"))
            return JUnitReport.TestCase(name: run.rule, className: className, outcome: outcome,
                                        seconds: run.seconds, output: output)
        })
    }
}
