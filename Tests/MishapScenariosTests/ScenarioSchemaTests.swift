import Foundation
import MishapEngine
@testable import MishapScenarios
import MishapTestSupport
import Testing

/// `docs/scenario.schema.json` and the compiler agree on the keys: each mapping the compiler
/// reads with a list of known keys (those of its "unknown key ... expected one of" messages) is
/// a definition of the schema with exactly those keys, and the schema has no other closed
/// mapping; its enumerations are the compiler's (methods, faults, rate-limit header styles).
/// That the schema accepts the files Mishap loads, and refuses some it refuses at the same
/// place, is checked against the loader by Tests/python/test_scenario_schema.py.
struct ScenarioSchemaTests {
    /// The repository's root folder.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where each of the compiler's key lists is in the schema ("" for the file itself), by the
    /// name the compiler gives the list.
    static let keyLists: [(list: String, definition: String, keys: [String])] = [
        ("fileKeys", "", FileCompiler.fileKeys),
        ("endpointKeys", "endpointEntry", FileCompiler.endpointKeys),
        ("ruleKeys", "rule", FileCompiler.ruleKeys),
        ("whenKeys", "when", FileCompiler.whenKeys),
        ("conditionKeys", "condition", FileCompiler.conditionKeys),
        ("responseKeys", "response", FileCompiler.responseKeys),
        ("delayRangeKeys", "delay", [FileCompiler.delayRangeKeys.0, FileCompiler.delayRangeKeys.1]),
        ("dribbleKeys", "dribble", [FileCompiler.dribbleKeys.0, FileCompiler.dribbleKeys.1]),
        ("quotaKeys", "quota", FileCompiler.quotaKeys),
        ("stateDeclarationKeys", "stateDeclaration", FileCompiler.stateDeclarationKeys),
        ("effectKeys", "stateChange", FileCompiler.effectKeys),
        ("networkKeys", "networkProfile", FileCompiler.networkKeys),
        ("latencyKeys", "latency", FileCompiler.latencyKeys),
        ("bandwidthKeys", "bandwidth", FileCompiler.bandwidthKeys),
        ("uploadKeys", "upload", FileCompiler.uploadKeys),
        ("rangesKeys", "rangeOptions", FileCompiler.rangesKeys),
        ("eventKeys", "event", FileCompiler.eventKeys),
        ("webSocketKeys", "websocket", FileCompiler.webSocketKeys),
        ("webSocketMessageKeys", "websocketMessage", FileCompiler.webSocketMessageKeys),
        ("webSocketReplyKeys", "websocketReply", FileCompiler.webSocketReplyKeys),
        ("webSocketMatchKeys", "websocketMatch", FileCompiler.webSocketMatchKeys),
        ("webSocketEndKeys", "websocketEnd", FileCompiler.webSocketEndKeys),
    ]

    static func schema() throws -> [String: Any] {
        let data = try Data(contentsOf: repository.appendingPathComponent("docs/scenario.schema.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func definitions() throws -> [String: [String: Any]] {
        try #require(try schema()["definitions"] as? [String: [String: Any]])
    }

    /// The keys a schema object allows, when it allows no others.
    static func closedKeys(_ object: [String: Any]) -> Set<String>? {
        guard object["additionalProperties"] as? Bool == false, let properties = object["properties"] as? [String: Any] else { return nil }
        return Set(properties.keys)
    }

    /// Each key list of the compiler is a closed mapping of the schema with the same keys.
    @Test func everyKeyTheCompilerAcceptsAndNoOther() throws {
        let schema = try Self.schema()
        let definitions = try Self.definitions()
        for (list, definition, keys) in Self.keyLists {
            let object = definition.isEmpty ? schema : try #require(definitions[definition], "no definition '\(definition)' for \(list)")
            let described = try #require(Self.closedKeys(object), "'\(definition)' is not a closed mapping")
            #expect(described == Set(keys), "\(list) (\(definition.isEmpty ? "the file" : definition)): compiler only \(Set(keys).subtracting(described).sorted()), schema only \(described.subtracting(keys).sorted())")
        }
        // The schema's closed mappings are those, and no other.
        let closed = Set(definitions.filter { Self.closedKeys($0.value) != nil }.keys)
        #expect(closed == Set(Self.keyLists.map(\.definition).filter { !$0.isEmpty }), "\(closed.sorted())")
    }

    /// Every list of known keys the compiler checks a mapping against (`allowedKeys:`, and the
    /// two keys of `bothValues`) is one `keyLists` names, so a new one cannot be left out of the
    /// schema: found in the compiler's source.
    @Test func everyKeyListOfTheCompilerIsChecked() throws {
        let folder = Self.repository.appendingPathComponent("Sources/MishapScenarios")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
        var used: [String] = []
        let reference = try NSRegularExpression(pattern: #"\b(?:allowedKeys|keys): (?:Self\.|FileCompiler\.)?([A-Za-z]+)(?=[,)])"#)
        let literal = try NSRegularExpression(pattern: #"allowedKeys: \[(?!keys\.0, keys\.1\]|String\])"#)
        for file in files {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let written = literal.matches(in: text, range: NSRange(text.startIndex..., in: text)).count
            #expect(written == 0, "\(file) checks keys against a list written in place: name it, and add it to keyLists")
            for match in reference.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                used.append(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        let checked = Set(Self.keyLists.map(\.list))
        #expect(used.count >= Self.keyLists.count, "\(used)")
        for name in used {
            #expect(checked.contains(name), "the compiler checks keys against '\(name)', which the schema test does not cover")
        }
    }

    /// The schema's enumerations are the compiler's: methods (in any case), faults and quota
    /// header styles.
    @Test func enumerationsAreTheCompilers() throws {
        let definitions = try Self.definitions()
        let response = try #require(definitions["response"]?["properties"] as? [String: [String: Any]])
        // A stream of events adds `stall`, the one stream fault that is not a connection fault.
        let streamOnly = EventStreamFault.allCases.map(\.rawValue).filter { Fault(rawValue: $0) == nil }
        #expect(response["fault"]?["enum"] as? [String] == Fault.allCases.map(\.rawValue) + streamOnly)
        let streamed = try #require(definitions["response"]?["dependencies"] as? [String: Any])
        let eventsDependency = try #require((streamed["events"] as? [String: Any])?["properties"] as? [String: Any])
        #expect((eventsDependency["fault"] as? [String: Any])?["enum"] as? [String] == EventStreamFault.allCases.map(\.rawValue))
        let malformed = try #require((definitions["event"]?["properties"] as? [String: [String: Any]])?["malformed"]?["enum"] as? [Any])
        #expect(malformed.compactMap { $0 as? String } == EventMalformation.allCases.map(\.rawValue))
        let quota = try #require(definitions["quota"]?["properties"] as? [String: [String: Any]])
        #expect(quota["headers"]?["enum"] as? [String] == Quota.HeaderStyle.allCases.map(\.rawValue))

        for name in ["endpointDeclaration", "extends"] {
            let pattern = try #require(definitions[name]?["pattern"] as? String)
            let expression = try NSRegularExpression(pattern: pattern)
            func matches(_ text: String) -> Bool {
                expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
            }
            for method in FileCompiler.methods {
                #expect(matches("\(method) /a/{id}"), "\(name): \(method)")
                #expect(matches("\(method.lowercased()) /a"), "\(name): \(method.lowercased())")
            }
            for wrong in ["GTE /a", "GET", "GET a", "GET /a /b", "/a", "CONNECT /a"] {
                #expect(!matches(wrong), "\(name): \(wrong)")
            }
        }
    }
}
