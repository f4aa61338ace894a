import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `events:` in a response, with `repeat`, `heartbeat` and the stream's `fault`: the bytes each
/// event compiles to, and each mistake located and named.
@Suite("Event stream declarations")
struct EventStreamDeclarationTests {
    func stream(_ respond: String, request: Request = Request(method: "GET", path: "/e")) throws -> EventStreamPlan {
        let yaml = "endpoint: GET /e\nrules:\n  - name: a\n    respond:\n" + respond.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
        let plan = try ScenarioLoader.load(yaml: yaml).makeEngine().respond(to: request)
        guard case .events(let events)? = plan.stream else {
            Issue.record("no stream of events")
            return EventStreamPlan(events: [])
        }
        return events
    }

    func text(_ event: EventStreamPlan.Event) -> String { String(decoding: event.bytes, as: UTF8.self) }

    @Test func eachFieldGoesOnItsLineInAFixedOrder() throws {
        let plan = try stream("""
            events:
              - { data: "hello", event: update, id: 7, retry: 2s, delay: 100ms }
            """)
        #expect(plan.events.count == 1)
        #expect(text(plan.events[0]) == "id: 7\nevent: update\nretry: 2000\ndata: hello\n\n")
        #expect(plan.events[0].delayMilliseconds == 100)
        #expect(plan.events[0].id == "7" && plan.events[0].retryMilliseconds == 2000)
        #expect(plan.passes == 1 && plan.fault == nil && plan.heartbeatMilliseconds == nil)
    }

    @Test func multiLineDataBecomesSeveralDataLinesAndYAMLIsOneLineOfJSON() throws {
        let plan = try stream("""
            events:
              - { data: "one\\ntwo\\r\\nthree" }
              - data: { n: 1, who: "{{query.name}}", list: [1, two] }
            """, request: Request(method: "GET", path: "/e", query: [Field("name", "a\"b")]))
        #expect(text(plan.events[0]) == "data: one\ndata: two\ndata: three\n\n")
        #expect(text(plan.events[1]) == #"data: {"n":1,"who":"a\"b","list":[1,"two"]}"# + "\n\n")
    }

    @Test func placeholdersFillTheIdAndDropLineBreaks() throws {
        let plan = try stream("""
            events:
              - { id: "{{query.id}}", data: "{{query.id}}" }
            """, request: Request(method: "GET", path: "/e", query: [Field("id", "4\n2")]))
        #expect(text(plan.events[0]) == "id: 42\ndata: 4\ndata: 2\n\n")
    }

    @Test func malformedEventsAreBrokenAsDocumented() throws {
        let plan = try stream("""
            events:
              - { data: a, malformed: true }
              - { data: b, malformed: field }
              - { data: c, malformed: unterminated }
              - { id: 4, data: d, malformed: utf8 }
            """)
        #expect(text(plan.events[0]) == "mishap-malformed\ndata: a\n\n")
        #expect(text(plan.events[1]) == "mishap-malformed\ndata: b\n\n")
        #expect(text(plan.events[2]) == "data: c\n")
        #expect(plan.events[3].bytes == Array("id: 4\ndata: ".utf8) + [0xFF, 0xFE] + Array("d\n\n".utf8))
    }

    @Test func repeatHeartbeatAndFault() throws {
        let plan = try stream("""
            events: [ { data: a, delay: 1s } ]
            repeat: 3
            heartbeat: 15s
            fault: stall
            """)
        #expect(plan.passes == 3 && plan.heartbeatMilliseconds == 15_000 && plan.fault == .stall)
        let forever = try stream("events: [ { data: a, delay: 1s } ]\nrepeat: true")
        #expect(forever.passes == nil)
        let once = try stream("events: [ { data: a } ]\nrepeat: false\nfault: reset")
        #expect(once.passes == 1 && once.fault == .reset)
    }

    func problems(_ respond: String) -> [String] {
        let yaml = "endpoint: GET /e\nrules:\n  - name: a\n    respond:\n" + respond.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
        return diagnostics(ofYAML: yaml).map { "\($0.line):\($0.column) \($0.message)" }
    }

    @Test func mistakesAreLocatedAndNamed() {
        #expect(problems("events: []") == ["5:15 'events' needs at least one event"])
        #expect(problems("events: [ { delay: 1s } ]") == ["5:17 an event needs at least one of 'id', 'event', 'data' and 'retry'"])
        #expect(problems("events: [ { data: a, colour: red } ]") == [
            "5:28 unknown key 'colour' in an event; expected one of 'id', 'event', 'data', 'retry', 'delay', 'malformed'"])
        #expect(problems("events: [ { data: a, malformed: utf16 } ]") == [
            "5:39 unknown 'malformed' 'utf16'; expected true (the same as 'field') or one of field, unterminated, utf8"])
        #expect(problems("events: [ { data: a, delay: soon } ]") == [
            "5:35 'delay' must be a duration in milliseconds, like 300 or '2s' (units: ms, s, m, h), not 'soon'"])
        #expect(problems("events: [ { data: a, retry: [1] } ]") == ["5:35 'retry' must be a duration in milliseconds, like 300 or '2s'"])
        #expect(problems("events: [ { id: \"a\\nb\" } ]") == ["5:23 'id' must be on one line: a line break would end the field"])
        #expect(problems("events: [ { data: a } ]\nfault: garbage") == [
            "6:14 a stream of events ends with the fault 'reset', 'close' or 'stall', not 'garbage' (each event can be 'malformed')"])
        #expect(problems("events: [ { data: a } ]\nrepeat: 0") == [
            "6:15 'repeat' must be true (until the client leaves) or how many times the events are sent in all, from 1 to 100000"])
        #expect(problems("events: [ { data: a } ]\nrepeat: true") == [
            "6:15 'repeat: true' needs a 'delay' on at least one event, or the stream would send as fast as the socket takes it"])
        #expect(problems("events: [ { data: a, delay: 1s } ]\nrepeat: true\nfault: reset") == [
            "7:14 'repeat: true' sends the events until the client leaves, so the 'fault' after them would never happen"])
        #expect(problems("events: [ { data: a } ]\nheartbeat: 1ms") == ["6:18 'heartbeat' must be at least 10ms"])
        #expect(problems("events: [ { data: a } ]\ntext: hi") == ["6:7 a stream of events has no body: 'text' cannot be combined with 'events'"])
        #expect(problems("events: [ { data: a } ]\ndribble: { chunks: 2, duration: 1s }") == [
            "6:7 'dribble' cannot be combined with 'events': give each event a 'delay' instead"])
        #expect(problems("events: { data: a }") == ["5:15 'events' must be a list"])
        #expect(problems("heartbeat: 1s\ntext: a") == ["5:7 'heartbeat' belongs to a stream of events and needs 'events'"])
    }

    @Test func tooManyEventsAreRefused() {
        let list = (0...1000).map { "  - { data: \($0) }" }.joined(separator: "\n")
        #expect(problems("events:\n" + list).first == "6:9 'events' lists 1001 events; at most 1000 are allowed (use 'repeat' to send them again)")
    }
}
