// TEMPORARY, removed with Yams: the proof that YAMLComposer reads scenario files as Yams did.
// Runs only when MISHAP_PROOF_STAGE names a stage; reads its inputs from /tmp/yaml-proof/inputs
// (every text the loader compiled while every suite but HTTPFuzzTests ran, the fuzzers and the
// `mishap` processes of the CLI tests included, recorded by a hook in ScenarioLoader.compile
// kept out of the history),
// the repository's scenarios and 4,000 seeded mutations of the fuzz corpus.
// - compareWithYams: both composers over every input, node by node (kind, text, tag, style,
//   mark), and their errors as located problems.
// - record: the tree and the loader's result of every input, written to
//   /tmp/yaml-proof/STAGE/records.txt, to compare builds (Yams; YAMLComposer on Yams' copy of
//   libyaml; YAMLComposer on the system's) with SWIFT_DETERMINISTIC_HASHING=1.
import Foundation
import MishapEngine
import MishapFuzzSupport
@testable import MishapScenarios
import Testing
#if canImport(Yams)
import Yams
#endif

enum ProofInputs {
    static let root = "/tmp/yaml-proof"

    /// Every input, by name, in name order.
    static func all() throws -> [(name: String, text: String)] {
        var inputs: [(String, String)] = []
        let folder = root + "/inputs"
        for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() {
            let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            inputs.append(("log/" + name, String(decoding: data, as: UTF8.self)))
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: defaultScenariosDirectory).sorted() where name.hasSuffix(".yaml") {
            let data = try Data(contentsOf: URL(fileURLWithPath: defaultScenariosDirectory + "/" + name))
            inputs.append(("scenarios/" + name, String(decoding: data, as: UTF8.self)))
        }
        let bases = ScenarioCorpus.bases(scenarios: defaultScenariosDirectory).map { Array($0.utf8) }
        let count = Int(ProcessInfo.processInfo.environment["MISHAP_PROOF_MUTATIONS"] ?? "") ?? 4000
        for index in 0..<count {
            var random = SeededRandom(seed: 0xA11CE &+ UInt64(index) &* 0x1_0000_0001)
            let bytes = FuzzChecks.mutator.mutate(random.pick(bases), &random)
            inputs.append((String(format: "mutation/%05d", index), String(decoding: bytes, as: UTF8.self)))
        }
        return inputs
    }

    /// Text as a record shows it: escaped, and long text as its length and hash.
    static func shown(_ text: String) -> String {
        if text.utf8.count > 200 {
            var hash: UInt64 = 0xcbf29ce484222325
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100000001b3 }
            return "<\(text.utf8.count) bytes, \(String(hash, radix: 16))>"
        }
        return text.unicodeScalars.map { $0.escaped(asASCII: true) }.joined()
    }

    /// What the loader makes of `text`: its problems, or the endpoints it compiled.
    static func loaderRecord(_ text: String) -> String {
        do {
            let set = try ScenarioLoader.load(yaml: text)
            var out = "loaded: \(set.files) counters \(set.cycleCounters.keys.sorted().map(shown))\n"
            for endpoint in set.endpoints {
                out += "endpoint \(endpoint.method) \(endpoint.path) \(endpoint.source ?? "-")\n"
                for rule in endpoint.rules {
                    out += "  rule " + shown(String(describing: rule)) + "\n"
                }
            }
            return out
        } catch {
            return error.diagnostics.map { "\($0.file):\($0.line):\($0.column): \($0.message)" }.joined(separator: "\n") + "\n"
        }
    }
}

#if canImport(Yams)
enum YamsTrees {
    static func style(_ style: Node.Scalar.Style) -> String {
        switch style {
        case .any: return "any"
        case .plain: return "plain"
        case .singleQuoted: return "single"
        case .doubleQuoted: return "double"
        case .literal: return "literal"
        case .folded: return "folded"
        }
    }

    static func write(_ node: Node, depth: Int, into out: inout String) {
        let indent = String(repeating: " ", count: depth)
        let mark = node.mark.map { "\($0.line):\($0.column)" } ?? "-"
        switch node {
        case .scalar(let scalar):
            out += "\(indent)scalar \(mark) tag=\(scalar.tag.rawValue) \(style(scalar.style)) \(ProofInputs.shown(scalar.string))\n"
        case .mapping(let mapping):
            out += "\(indent)mapping \(mark) tag=\(mapping.tag.rawValue) \(mapping.count)\n"
            for (key, value) in mapping {
                write(key, depth: depth + 1, into: &out)
                write(value, depth: depth + 2, into: &out)
            }
        case .sequence(let sequence):
            out += "\(indent)sequence \(mark) tag=\(sequence.tag.rawValue) \(sequence.count)\n"
            for item in sequence { write(item, depth: depth + 1, into: &out) }
        case .alias:
            out += "\(indent)alias \(mark)\n"
        }
    }

    static func record(_ text: String) -> String {
        do {
            guard let root = try Yams.compose(yaml: text, .basic) else { return "empty\n" }
            var out = ""
            write(root, depth: 0, into: &out)
            return out
        } catch {
            let diagnostic = diagnostic(error)
            return "error: \(diagnostic.line):\(diagnostic.column): \(diagnostic.message)\n"
        }
    }

    /// ScenarioLoader.yamlDiagnostic as it was with Yams.
    static func diagnostic(_ error: any Error, file: String = "inline.yaml") -> ScenarioDiagnostic {
        func located(_ line: Int, _ column: Int, _ message: String) -> ScenarioDiagnostic {
            ScenarioDiagnostic(file: file, line: max(1, line), column: max(1, column),
                               message: message.isEmpty ? "YAML syntax error" : message)
        }
        guard let yamlError = error as? YamlError else {
            return located(1, 1, "\(error)")
        }
        switch yamlError {
        case .scanner(let context, let problem, let mark, let yaml),
             .parser(let context, let problem, let mark, let yaml),
             .composer(let context, let problem, let mark, let yaml):
            let end = YAMLLimits.end(of: yaml)
            let (line, column) = mark.line > end.line ? (end.line, end.column) : (mark.line, mark.column)
            if problem.hasPrefix("Maximum nesting level reached") {
                return located(line, column, YAMLLimits.depthMessage)
            }
            let detail = context.map { "\(problem) \($0.text)" } ?? problem
            return located(line, column, "YAML syntax: \(detail)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return located(context.mark.line, context.mark.column,
                "duplicate key \(duplicates.map { "'\(YAMLLimits.shown($0))'" }.joined(separator: ", ")) in one mapping")
        case .reader(let problem, let offset, _, let yaml):
            guard let offset, let index = yaml.index(yaml.startIndex, offsetBy: offset, limitedBy: yaml.endIndex) else {
                return located(1, 1, "YAML: \(problem)")
            }
            let place = YAMLLimits.location(ofByte: yaml.utf8.distance(from: yaml.utf8.startIndex, to: index), in: yaml)
            return located(place.line, place.column, "YAML: \(problem)")
        default:
            return located(1, 1, "YAML: \(yamlError)")
        }
    }
}
#endif

enum MineTrees {
    static func style(_ style: YAMLNode.Scalar.Style) -> String {
        switch style {
        case .plain: return "plain"
        case .singleQuoted: return "single"
        case .doubleQuoted: return "double"
        case .literal: return "literal"
        case .folded: return "folded"
        }
    }

    static func write(_ node: YAMLNode, depth: Int, into out: inout String) {
        let indent = String(repeating: " ", count: depth)
        let mark = "\(node.mark.line):\(node.mark.column)"
        switch node {
        case .scalar(let scalar):
            out += "\(indent)scalar \(mark) tag=\(scalar.tag) \(style(scalar.style)) \(ProofInputs.shown(scalar.string))\n"
        case .mapping(let mapping):
            out += "\(indent)mapping \(mark) tag=\(mapping.tag) \(mapping.count)\n"
            for (key, value) in mapping {
                write(key, depth: depth + 1, into: &out)
                write(value, depth: depth + 2, into: &out)
            }
        case .sequence(let sequence):
            out += "\(indent)sequence \(mark) tag=\(sequence.tag) \(sequence.count)\n"
            for item in sequence { write(item, depth: depth + 1, into: &out) }
        }
    }

    static func record(_ text: String) -> String {
        do {
            guard let root = try YAMLComposer.compose(text) else { return "empty\n" }
            var out = ""
            write(root, depth: 0, into: &out)
            return out
        } catch {
            let diagnostic = ScenarioLoader.yamlDiagnostic(error, text: text, file: "inline.yaml")
            return "error: \(diagnostic.line):\(diagnostic.column): \(diagnostic.message)\n"
        }
    }
}

@Suite("YAML equivalence records")
struct YAMLEquivalenceProof {
    @Test func record() throws {
        guard let stage = ProcessInfo.processInfo.environment["MISHAP_PROOF_STAGE"] else { return }
        let inputs = try ProofInputs.all()
        var out = ""
        for (name, text) in inputs {
            out += "=== \(name)\n"
            if let violation = YAMLLimits.check(text) {
                out += "limits: \(violation.line):\(violation.column): \(violation.message)\n"
            } else {
                out += MineTrees.record(text)
            }
            out += ProofInputs.loaderRecord(text)
        }
        try FileManager.default.createDirectory(atPath: ProofInputs.root + "/" + stage, withIntermediateDirectories: true)
        try Data(out.utf8).write(to: URL(fileURLWithPath: ProofInputs.root + "/" + stage + "/records.txt"))
        print("proof: \(inputs.count) inputs recorded for \(stage)")
    }

    #if canImport(Yams)
    /// Both composers over every input, compared node by node, and their errors as located
    /// problems.
    @Test func compareWithYams() throws {
        guard let stage = ProcessInfo.processInfo.environment["MISHAP_PROOF_STAGE"] else { return }
        let inputs = try ProofInputs.all()
        var differences: [String] = []
        var counts: [String: Int] = [:]
        for (name, text) in inputs {
            if YAMLLimits.check(text) != nil { counts["skipped (limits)", default: 0] += 1; continue }
            let yams = Result { try Yams.compose(yaml: text, .basic) }
            let mine = Result { () throws(YAMLError) in try YAMLComposer.compose(text) }
            switch (yams, mine) {
            case (.success(let a), .success(let b)):
                counts["both composed", default: 0] += 1
                switch (a, b) {
                case (nil, nil): counts["both empty", default: 0] += 1
                case (let a?, let b?):
                    var found: [String] = []
                    YAMLTreeComparison.compare(a, b, path: "", into: &found, counts: &counts)
                    for difference in found { differences.append("\(name): \(difference)") }
                default:
                    differences.append("\(name): empty vs not: \(String(describing: a)) \(String(describing: b))")
                }
            case (.failure(let a), .failure(let b)):
                counts["both failed", default: 0] += 1
                let yamsProblem = YamsTrees.diagnostic(a)
                let mineProblem = ScenarioLoader.yamlDiagnostic(b, text: text, file: "inline.yaml")
                if yamsProblem != mineProblem {
                    differences.append("\(name): errors differ: \(yamsProblem) vs \(mineProblem)")
                }
            case (.success, .failure(let b)):
                differences.append("\(name): Yams composed, mine failed: \(b)")
            case (.failure(let a), .success):
                differences.append("\(name): Yams failed (\(a)), mine composed")
            }
        }
        var report = "inputs: \(inputs.count)\n"
        for (key, value) in counts.sorted(by: { $0.key < $1.key }) { report += "\(key): \(value)\n" }
        report += "differences: \(differences.count)\n" + differences.prefix(300).joined(separator: "\n") + "\n"
        try Data(report.utf8).write(to: URL(fileURLWithPath: ProofInputs.root + "/compare-\(stage).txt"))
        print(report.prefix(3000))
    }
    #endif
}

#if canImport(Yams)
enum YAMLTreeComparison {
    static func resolved(_ tag: String, _ kind: String) -> String {
        tag.isEmpty || tag == "!" ? kind : tag
    }

    /// Differences between Yams' tree and mine. A tag that differs only because Yams resolved it
    /// while hashing keys (an empty or `!` tag becoming the kind's own) is counted, not reported.
    static func compare(_ a: Node, _ b: YAMLNode, path: String, into found: inout [String], counts: inout [String: Int]) {
        let markA = a.mark.map { "\($0.line):\($0.column)" } ?? "-"
        let markB = "\(b.mark.line):\(b.mark.column)"
        if markA != markB { found.append("\(path): mark \(markA) vs \(markB)") }
        func tags(_ tagA: String, _ tagB: String, _ kind: String) {
            if tagA == tagB { return }
            if tagA == resolved(tagB, kind) && path.contains("/key") {
                counts["tags Yams resolved while hashing keys", default: 0] += 1
            } else if tagA == resolved(tagB, kind) {
                counts["tags Yams resolved outside keys (aliases of key nodes)", default: 0] += 1
                found.append("\(path): tag \(tagA) vs \(tagB) (resolved through an alias)")
            } else {
                found.append("\(path): tag \(tagA) vs \(tagB)")
            }
        }
        switch (a, b) {
        case (.scalar(let x), .scalar(let y)):
            counts["scalars", default: 0] += 1
            if x.string != y.string || Array(x.string.utf8) != Array(y.string.utf8) {
                found.append("\(path): text \(ProofInputs.shown(x.string)) vs \(ProofInputs.shown(y.string))")
            }
            if YamsTrees.style(x.style) != MineTrees.style(y.style) {
                found.append("\(path): style \(YamsTrees.style(x.style)) vs \(MineTrees.style(y.style))")
            }
            tags(x.tag.rawValue, y.tag, "tag:yaml.org,2002:str")
        case (.mapping(let x), .mapping(let y)):
            counts["mappings", default: 0] += 1
            tags(x.tag.rawValue, y.tag, "tag:yaml.org,2002:map")
            if x.count != y.count { found.append("\(path): \(x.count) pairs vs \(y.count)"); return }
            for (index, (pairA, pairB)) in zip(x, y).enumerated() {
                compare(pairA.key, pairB.key, path: path + "/key\(index)", into: &found, counts: &counts)
                compare(pairA.value, pairB.value, path: path + "/value\(index)", into: &found, counts: &counts)
            }
        case (.sequence(let x), .sequence(let y)):
            counts["sequences", default: 0] += 1
            tags(x.tag.rawValue, y.tag, "tag:yaml.org,2002:seq")
            if x.count != y.count { found.append("\(path): \(x.count) items vs \(y.count)"); return }
            for (index, (itemA, itemB)) in zip(x, y).enumerated() {
                compare(itemA, itemB, path: path + "/\(index)", into: &found, counts: &counts)
            }
        default:
            found.append("\(path): kinds differ: \(a) vs \(b)")
        }
    }
}
#endif
