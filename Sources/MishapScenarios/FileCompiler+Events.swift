import MishapEngine

/// Server-Sent Events as written in a response: `events:` (a list of events), `repeat`,
/// `heartbeat` and the stream's `fault` (docs/streams.md).
extension FileCompiler {
    static let eventKeys = ["id", "event", "data", "retry", "delay", "malformed"]
    /// The response keys a stream of events cannot be given: it has no body of its own, and
    /// each event has its own `delay`.
    static let keysEventsExclude = ["json", "text", "base64", "file", "proxy", "hang", "dribble"]
    /// The most events one list declares: each is rendered for every request it answers.
    static let maximumEvents = 1000
    /// The most times the list is sent (`repeat: N`); `repeat: true` sends it until the client leaves.
    static let maximumEventPasses = 100_000
    /// The shortest heartbeat: more often would only make noise.
    static let minimumHeartbeatMilliseconds = 10

    /// `events:` with `repeat`, `heartbeat` and the stream's `fault`. Nil, after reporting,
    /// when they are wrong.
    mutating func compileEventStream(_ keyed: KeyedNodes) -> EventStreamTemplate? {
        guard let node = keyed["events"] else { return nil }
        var valid = true
        for name in Self.keysEventsExclude {
            guard let other = keyed.key(name) else { continue }
            let why = switch name {
            case "proxy": "a stream of events is answered here and cannot be sent on with 'proxy'"
            case "hang": "'hang' never answers, so the events would never be sent"
            case "dribble": "'dribble' cannot be combined with 'events': give each event a 'delay' instead"
            default: "a stream of events has no body: '\(name)' cannot be combined with 'events'"
            }
            error(why, at: other)
            valid = false
        }
        if let other = keyed.key("websocket") {
            error("a response is either a stream of events or a WebSocket script: 'events' and 'websocket' cannot both be given", at: other)
            valid = false
        }

        var events: [EventStreamTemplate.Event] = []
        if let list = sequence(node, what: "'events'") {
            if list.isEmpty {
                error("'events' needs at least one event", at: node)
                valid = false
            } else if list.count > Self.maximumEvents {
                error("'events' lists \(list.count) events; at most \(Self.maximumEvents) are allowed (use 'repeat' to send them again)", at: node)
                valid = false
            } else {
                for item in list {
                    if let event = compileEvent(item) { events.append(event) } else { valid = false }
                }
            }
        } else {
            valid = false
        }

        var passes: Int? = 1
        if let repeatNode = keyed["repeat"] {
            if let scalar = repeatNode.scalar, YAMLScalar.boolean(scalar) != nil {
                passes = YAMLScalar.boolean(scalar) == true ? nil : 1
            } else if let count = integer(repeatNode, what: "'repeat'", in: 1...Self.maximumEventPasses,
                                          expected: "true (until the client leaves) or how many times the events are sent in all, from 1 to \(Self.maximumEventPasses)") {
                passes = count
            } else {
                valid = false
            }
        }

        var heartbeat: Int?
        if let heartbeatNode = keyed["heartbeat"] {
            if let value = duration(heartbeatNode, what: "'heartbeat'") {
                if value < Self.minimumHeartbeatMilliseconds {
                    error("'heartbeat' must be at least \(Self.minimumHeartbeatMilliseconds)ms", at: heartbeatNode)
                    valid = false
                } else {
                    heartbeat = value
                }
            } else {
                valid = false
            }
        }

        var fault: EventStreamFault?
        if let faultNode = keyed["fault"] {
            let names = EventStreamFault.allCases.map(\.rawValue)
            if let name = string(faultNode, what: "'fault'") {
                if let value = EventStreamFault(rawValue: name) {
                    fault = value
                } else {
                    error("a stream of events ends with the fault 'reset', 'close' or 'stall', not '\(shown(name))'"
                          + hint(for: name, in: names) + " (each event can be 'malformed')", at: faultNode)
                    valid = false
                }
            } else {
                valid = false
            }
        }

        if valid, passes == nil {
            if let faultNode = keyed["fault"] {
                error("'repeat: true' sends the events until the client leaves, so the 'fault' after them would never happen", at: faultNode)
                valid = false
            }
            if events.allSatisfy({ $0.delayMilliseconds == 0 }), let repeatNode = keyed["repeat"] {
                error("'repeat: true' needs a 'delay' on at least one event, or the stream would send as fast as the socket takes it", at: repeatNode)
                valid = false
            }
        }
        guard valid else { return nil }
        return EventStreamTemplate(events: events, passes: passes, heartbeatMilliseconds: heartbeat, fault: fault)
    }

    /// One event: `id`, `event`, `data` (text, or any YAML sent as JSON on one line), `retry`,
    /// `delay`, `malformed`. Nil, after reporting, when it is wrong.
    private mutating func compileEvent(_ node: YAMLNode) -> EventStreamTemplate.Event? {
        guard let keyed = mapping(node, allowedKeys: Self.eventKeys, what: "an event") else { return nil }
        var valid = true
        var event = EventStreamTemplate.Event()
        if keyed["id"] == nil && keyed["event"] == nil && keyed["data"] == nil && keyed["retry"] == nil {
            error("an event needs at least one of 'id', 'event', 'data' and 'retry'", at: node)
            valid = false
        }
        func line(_ name: String, _ compiler: inout FileCompiler) -> Template? {
            guard let value = keyed[name] else { return nil }
            guard let text = compiler.string(value, what: "'\(name)'") else { valid = false; return nil }
            if text.contains(where: \.isNewline) {
                compiler.error("'\(name)' must be on one line: a line break would end the field", at: value)
                valid = false
                return nil
            }
            guard let template = compiler.template(text, escaping: .none, at: value) else { valid = false; return nil }
            return template
        }
        event.id = line("id", &self)
        event.name = line("event", &self)
        if let data = keyed["data"] {
            if data.scalar != nil {
                if let text = string(data, what: "'data'"), let template = template(text, escaping: .none, at: data) {
                    event.data = template
                } else {
                    valid = false
                }
            } else if let segments = jsonSegments(data) {
                event.data = Template(segments: segments, escaping: .json)
            } else {
                valid = false
            }
        }
        if let retry = keyed["retry"] {
            if let value = duration(retry, what: "'retry'") { event.retryMilliseconds = value } else { valid = false }
        }
        if let delay = keyed["delay"] {
            if let value = duration(delay, what: "'delay'") { event.delayMilliseconds = value } else { valid = false }
        }
        if let malformed = keyed["malformed"] {
            let names = EventMalformation.allCases.map(\.rawValue)
            if let scalar = malformed.scalar, let flag = YAMLScalar.boolean(scalar) {
                event.malformation = flag ? .field : nil
            } else if let name = string(malformed, what: "'malformed'") {
                if let value = EventMalformation(rawValue: name) {
                    event.malformation = value
                } else {
                    error("unknown 'malformed' '\(shown(name))'\(hint(for: name, in: names)); expected true (the same as 'field') or one of "
                          + names.joined(separator: ", "), at: malformed)
                    valid = false
                }
            } else {
                valid = false
            }
        }
        return valid ? event : nil
    }
}
