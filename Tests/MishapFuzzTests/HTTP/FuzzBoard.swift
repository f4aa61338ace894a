import Synchronization

/// What the cases found, shared by the workers.
final class FuzzBoard: Sendable {
    private struct State {
        var failures: [String] = []
        var failingCases = 0
        var kinds: [String: Int] = [:]
        var statuses: [Int: Int] = [:]
        var labels: [String: Int] = [:]
        var responses = 0
        var bytesSent = 0
        var slowest: [(Duration, Int, String)] = []
        var time: [String: Duration] = [:]
        /// Cases by duration: under 10 ms, 50 ms, 200 ms, 1 s, and longer.
        var durations = [0, 0, 0, 0, 0]
        var problemKinds: [String: Int] = [:]
    }

    let seed: UInt64
    private let state = Mutex(State())

    init(seed: UInt64) { self.seed = seed }

    func record(index: Int, _ fuzzCase: FuzzCase, _ outcome: FuzzOutcome) {
        let (problems, label) = FuzzRunner.check(fuzzCase, outcome)
        let stream = WireReader.read(outcome.received, atEnd: true)
        state.withLock { state in
            state.kinds[fuzzCase.kind, default: 0] += 1
            state.labels[label, default: 0] += 1
            state.bytesSent += fuzzCase.bytes.count
            for response in stream.responses {
                state.statuses[response.status, default: 0] += 1
                state.responses += 1
            }
            state.slowest.append((outcome.elapsed, index, "\(fuzzCase.kind) \(fuzzCase.ending) \(label)"))
            state.slowest.sort { $0.0 > $1.0 }
            if state.slowest.count > 8 { state.slowest.removeLast() }
            state.time[fuzzCase.kind, default: .zero] += outcome.elapsed
            state.durations[[.milliseconds(10), .milliseconds(50), .milliseconds(200), .seconds(1)].firstIndex { outcome.elapsed < $0 } ?? 4] += 1
            for problem in problems {
                state.problemKinds["\(fuzzCase.kind): " + String(problem.prefix { $0 != ":" }.prefix(60)), default: 0] += 1
            }
            guard !problems.isEmpty else { return }
            state.failingCases += 1
            state.failures.append("seed \(seed) case \(index) (\(fuzzCase.kind)): \(problems.joined(separator: "; "))\n"
                + "    sent: \(printable(fuzzCase.bytes, limit: 400))\n    got (\(outcome.end)): \(printable(outcome.received, limit: 600))")
        }
    }

    func fail(_ label: String, _ problem: String) {
        state.withLock { $0.failures.append("seed \(seed) \(label): \(problem)") }
    }

    func note(_ label: String) {
        state.withLock { $0.labels[label.components(separatedBy: ",")[0], default: 0] += 1 }
    }

    var failures: [String] { state.withLock { $0.failures } }

    func summary(cases: Int, elapsed: Duration, descriptors: (Int, Int)) -> String {
        state.withLock { state in
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            return """
                HTTP fuzz: seed \(seed), \(cases) cases in \(String(format: "%.1f", seconds)) s (\(state.failingCases) failing), \
                \(state.bytesSent) bytes sent, \(state.responses) responses
                  slowest: \(state.slowest.map { "case \($0.1) \($0.2) \($0.0)" }.joined(separator: "; "))
                  kinds: \(state.kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                  statuses: \(state.statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: ", "))
                  endings: \(state.labels.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                  durations (<10 ms, <50 ms, <200 ms, <1 s, longer): \(state.durations)
                  time per kind: \(state.time.sorted { $0.value > $1.value }.prefix(8).map { "\($0.key) \($0.value)" }.joined(separator: ", "))
                  problems: \(state.problemKinds.sorted { $0.value > $1.value }.map { "\($0.key) ×\($0.value)" }.joined(separator: "\n    "))
                  descriptors of the process before/after: \(descriptors.0)/\(descriptors.1)
                """
        }
    }
}
