import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `respond: { websocket: {...} }`: what a script compiles to, what its replies match, and each
/// mistake located on its key.
@Suite("WebSocket declarations")
struct WebSocketDeclarationTests {
    func script(_ websocket: String) throws -> WebSocketScript? {
        let yaml = "endpoint: GET /ws\nrules:\n  - name: a\n    respond:\n      websocket: \(websocket)\n"
        let plan = try ScenarioLoader.load(yaml: yaml).makeEngine().respond(to: Request(method: "GET", path: "/ws"))
        guard case .webSocket(let script)? = plan.stream else { return nil }
        return script
    }

    func problems(_ websocket: String, extra: String = "") -> [String] {
        let yaml = "endpoint: GET /ws\nrules:\n  - name: a\n    respond:\n      websocket: \(websocket)\n\(extra)"
        return diagnostics(ofYAML: yaml).map { "\($0.line):\($0.column): \($0.message)" }
    }

    @Test func aScriptCompilesToItsMessagesRepliesAndEnd() throws {
        let compiled = try #require(try script("""
            { send: [ { text: hello, delay: 100ms }, { base64: AAEC } ], replies: [ { when: { text: ping }, send: { text: pong } } ], end: { close: 4000, reason: bye, after: 2s } }
            """))
        #expect(compiled.send == [WebSocketMessage(payload: Array("hello".utf8), isText: true, delayMilliseconds: 100),
                                  WebSocketMessage(payload: [0, 1, 2], isText: false)])
        #expect(compiled.end == WebSocketEnd(.close(code: 4000, reason: "bye"), afterMilliseconds: 2_000))
        #expect(compiled.reply(to: Array("ping".utf8), isText: true) == [WebSocketMessage(payload: Array("pong".utf8), isText: true)])
        #expect(compiled.reply(to: Array("pingg".utf8), isText: true) == nil)
    }

    @Test func repliesMatchAPatternJSONFieldsOrBinaryMessages() throws {
        let compiled = try #require(try script("""
            { replies: [ { when: { matches: "^count [0-9]+$" }, send: { text: a } }, { when: { json: { type: hi, user.age: { atLeast: 18 } } }, send: { text: b } }, { when: { binary: true }, send: { text: c } } ] }
            """))
        func answer(_ text: String) -> String? {
            compiled.reply(to: Array(text.utf8), isText: true).map { String(decoding: $0[0].payload, as: UTF8.self) }
        }
        #expect(answer("count 12") == "a")
        #expect(answer("count x") == nil)
        #expect(answer(#"{"type": "hi", "user": {"age": 20}}"#) == "b")
        #expect(answer(#"{"type": "hi", "user": {"age": 12}}"#) == nil)
        #expect(answer("not json") == nil)
        #expect(compiled.reply(to: [1, 2], isText: false)?.first?.payload == Array("c".utf8))
    }

    @Test func everyEndingCompiles() throws {
        #expect(try script("{ end: { drop: true, after: 1s } }")?.end == WebSocketEnd(.drop, afterMilliseconds: 1_000))
        #expect(try script("{ end: { stallPings: true } }")?.end == WebSocketEnd(.stallPings))
        #expect(try script("{ end: { garbage: true } }")?.end == WebSocketEnd(.garbage))
        #expect(try script("{ end: { oversized: true } }")?.end == WebSocketEnd(.oversized))
        #expect(try script("{ end: { reset: true } }")?.end == WebSocketEnd(.reset))
        #expect(try script("{ refuse: 403 }")?.refuse == 403)
    }

    @Test func mistakesAreLocatedOnTheirKey() {
        #expect(problems("{ sned: [] }").first?.hasPrefix("5:20: unknown key 'sned'") == true)
        #expect(problems("{ send: [ { text: a, base64: AA== } ] }") == ["5:28: a WebSocket message is 'text' or 'base64', not both"])
        #expect(problems("{ send: [ { delay: 1s } ] }") == ["5:28: a WebSocket message needs 'text' (a text message) or 'base64' (a binary one)"])
        #expect(problems("{ end: { close: 1005 } }") == ["5:34: 'close' must be a code a server may send: 1000, 1001, 1003, 1007 to 1014, or 3000 to 4999, not 1005"])
        #expect(problems("{ end: { drop: true, reset: true } }") == ["5:25: 'end' takes one ending, not 'drop' and 'reset'"])
        #expect(problems("{ end: { after: 1s } }") == ["5:25: 'end' needs one of 'close: CODE', 'drop: true', 'stallPings: true', 'garbage: true', 'oversized: true', 'reset: true'"])
        #expect(problems("{ end: { drop: true, reason: x } }") == ["5:39: 'reason' goes with 'close: CODE'"])
        #expect(problems("{ refuse: 200 }") == ["5:28: 'refuse' must be a status from 400 to 599"])
        #expect(problems("{ refuse: 403, send: [ { text: a } ] }") == ["5:33: 'send' is never played: 'refuse' answers the upgrade with an error"])
        #expect(problems("{ replies: [ { when: { matches: '(' }, send: { text: a } } ] }").first?.hasPrefix("5:50: invalid regular expression '('") == true)
        #expect(problems("{ replies: [ { send: { text: a } } ] }") == ["5:31: a reply needs 'when' (the client's message it answers) and 'send'"])
        #expect(problems("{ send: [ { text: a } ] }", extra: "      status: 200\n") == ["6:7: 'status' cannot be used with 'websocket': the upgrade answers 101; refuse it with 'refuse: STATUS' inside 'websocket'"])
        #expect(problems("{ send: [ { text: a } ] }", extra: "      fault: reset\n").first?.hasPrefix("6:7: 'fault' cannot be used with 'websocket'") == true)
    }

    @Test func aScriptIsBoundedInLength() {
        let messages = Array(repeating: "{ text: a }", count: WebSocketScript.maximumMessages + 1).joined(separator: ", ")
        #expect(problems("{ send: [ \(messages) ] }") == ["5:18: a WebSocket script holds at most 1000 messages (in 'send' and 'replies' together), not 1001"])
    }
}
