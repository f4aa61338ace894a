import MishapEngine
import MishapPattern
import MishapSupport

/// `respond: { websocket: {...} }`: a script for an upgraded connection (docs/websocket.md).
extension FileCompiler {
    static let webSocketKeys = ["send", "replies", "end", "refuse"]
    static let webSocketMessageKeys = ["text", "base64", "delay"]
    static let webSocketReplyKeys = ["when", "send"]
    static let webSocketMatchKeys = ["text", "matches", "json", "binary"]
    static let webSocketEndKeys = ["close", "reason", "after", "drop", "stallPings", "garbage", "oversized", "reset"]
    /// The response keys a WebSocket answer cannot have: it has no body, and its faults are the
    /// script's own (`end`).
    static let keysBesideWebSocket = ["status", "json", "text", "base64", "file", "contentType", "hang", "dribble",
                                      "fault", "proxy", "events", "ranges"]

    /// `websocket:`, a script for an upgraded connection. Nil, after reporting, when it is
    /// wrong.
    mutating func compileWebSocket(_ node: YAMLNode, _ keyed: KeyedNodes) -> WebSocketScript? {
        var valid = true
        for name in Self.keysBesideWebSocket {
            guard let other = keyed.key(name) else { continue }
            let why = name == "status" ? "the upgrade answers 101; refuse it with 'refuse: STATUS' inside 'websocket'"
                : name == "fault" ? "a socket's faults are written in 'websocket: { end: ... }'"
                : "a WebSocket answer has no body or stream of its own"
            error("'\(name)' cannot be used with 'websocket': \(why)", at: other)
            valid = false
        }
        guard let script = mapping(node, allowedKeys: Self.webSocketKeys, what: "'websocket'") else { return nil }
        var result = WebSocketScript()
        if let refuse = script["refuse"] {
            if let status = integer(refuse, what: "'refuse'", in: 400...599, expected: "a status from 400 to 599") {
                result.refuse = status
            } else {
                valid = false
            }
            for name in ["send", "replies", "end"] {
                guard let other = script.key(name) else { continue }
                error("'\(name)' is never played: 'refuse' answers the upgrade with an error", at: other)
                valid = false
            }
        }
        var count = 0
        if let send = script["send"] {
            if let messages = webSocketMessages(send, what: "'send'") {
                result.send = messages
                count += messages.count
            } else {
                valid = false
            }
        }
        if let replies = script["replies"] {
            if let items = sequence(replies, what: "'replies'") {
                for item in items {
                    if let reply = webSocketReply(item) {
                        result.replies.append(reply)
                        count += reply.send.count
                    } else {
                        valid = false
                    }
                }
            } else {
                valid = false
            }
        }
        if count > WebSocketScript.maximumMessages {
            error("a WebSocket script holds at most \(WebSocketScript.maximumMessages) messages (in 'send' and 'replies' together), not \(count)", at: node)
            valid = false
        }
        if let end = script["end"] {
            if let parsed = webSocketEnd(end) { result.end = parsed } else { valid = false }
        }
        return valid ? result : nil
    }

    /// One message or a list of them.
    private mutating func webSocketMessages(_ node: YAMLNode, what: String) -> [WebSocketMessage]? {
        if case .sequence = node {
            guard let items = sequence(node, what: what) else { return nil }
            let messages = items.map { webSocketMessage($0) }
            return messages.contains(where: { $0 == nil }) ? nil : messages.compactMap { $0 }
        }
        return webSocketMessage(node).map { [$0] }
    }

    /// `{ text: hello, delay: 100ms }` or `{ base64: ... }`.
    private mutating func webSocketMessage(_ node: YAMLNode) -> WebSocketMessage? {
        guard let keyed = mapping(node, allowedKeys: Self.webSocketMessageKeys, what: "a WebSocket message") else { return nil }
        var delay = 0
        if let value = keyed["delay"] {
            guard let parsed = duration(value, what: "'delay'") else { return nil }
            delay = parsed
        }
        let message: WebSocketMessage
        switch (keyed["text"], keyed["base64"]) {
        case (let text?, nil):
            guard let value = string(text, what: "'text'") else { return nil }
            message = WebSocketMessage(payload: Array(value.utf8), isText: true, delayMilliseconds: delay)
        case (nil, let encoded?):
            guard let value = string(encoded, what: "'base64'") else { return nil }
            guard let bytes = Base64.decode(value) else {
                error("'base64' is not valid base64", at: encoded)
                return nil
            }
            message = WebSocketMessage(payload: bytes, isText: false, delayMilliseconds: delay)
        case (_?, _?):
            error("a WebSocket message is 'text' or 'base64', not both", at: node)
            return nil
        case (nil, nil):
            error("a WebSocket message needs 'text' (a text message) or 'base64' (a binary one)", at: node)
            return nil
        }
        if message.payload.count > WebSocketScript.maximumMessageBytes {
            error("a WebSocket message holds at most \(WebSocketScript.maximumMessageBytes) bytes, not \(message.payload.count)", at: node)
            return nil
        }
        return message
    }

    /// `{ when: {...}, send: ... }`.
    private mutating func webSocketReply(_ node: YAMLNode) -> WebSocketReply? {
        guard let keyed = mapping(node, allowedKeys: Self.webSocketReplyKeys, what: "a reply") else { return nil }
        guard let whenNode = keyed["when"], let sendNode = keyed["send"] else {
            error("a reply needs 'when' (the client's message it answers) and 'send'", at: node)
            return nil
        }
        let match = webSocketMatch(whenNode)
        let messages = webSocketMessages(sendNode, what: "'send'")
        guard let match, let messages else { return nil }
        return WebSocketReply(when: match, send: messages)
    }

    /// `when: { text: ping }`, `{ matches: '^ping' }`, `{ json: { type: ping } }`, `{ binary: true }`.
    private mutating func webSocketMatch(_ node: YAMLNode) -> WebSocketMatch? {
        guard let keyed = mapping(node, allowedKeys: Self.webSocketMatchKeys, what: "a reply's 'when'") else { return nil }
        var match = WebSocketMatch()
        var valid = true
        if let text = keyed["text"] {
            if let value = string(text, what: "'text'") { match.text = value } else { valid = false }
        }
        if let source = keyed["matches"] {
            if let value = string(source, what: "'matches'") {
                do {
                    match.pattern = try Pattern(value)
                } catch {
                    self.error("invalid regular expression '\(value)': \(error)", at: source)
                    valid = false
                }
            } else {
                valid = false
            }
        }
        if let json = keyed["json"] {
            if let fields = namedMapping(json, what: "'json'") {
                for field in fields {
                    guard let condition = compileCondition(field.value) else { valid = false; continue }
                    guard WebSocketMatch.canTest(condition) else {
                        error("a message's field is tested without placeholders ({{...}}): there is no request to fill them in from", at: field.value)
                        valid = false
                        continue
                    }
                    match.json.append((field.name.split(separator: ".", omittingEmptySubsequences: false).map(String.init), condition))
                }
            } else {
                valid = false
            }
        }
        if let binary = keyed["binary"] {
            if let flag = boolean(binary, what: "'binary'") { match.binary = flag } else { valid = false }
        }
        return valid ? match : nil
    }

    /// `end: { close: 4000, reason: bye, after: 2s }`, or one of `drop`, `stallPings`,
    /// `garbage`, `oversized`, `reset` set to true, with an optional `after`.
    private mutating func webSocketEnd(_ node: YAMLNode) -> WebSocketEnd? {
        guard let keyed = mapping(node, allowedKeys: Self.webSocketEndKeys, what: "'end'") else { return nil }
        var after = 0
        if let value = keyed["after"] {
            guard let parsed = duration(value, what: "'after'") else { return nil }
            after = parsed
        }
        let flags: [(String, WebSocketEnding)] = [("drop", .drop), ("stallPings", .stallPings), ("garbage", .garbage),
                                                 ("oversized", .oversized), ("reset", .reset)]
        var endings: [(name: String, ending: WebSocketEnding)] = []
        for (name, ending) in flags {
            guard let value = keyed[name] else { continue }
            guard let flag = boolean(value, what: "'\(name)'") else { return nil }
            if flag { endings.append((name, ending)) }
        }
        if let closeNode = keyed["close"] {
            // A close code a server may send: 1000, 1001, 1003, 1007-1014 (RFC 6455 7.4.1), or
            // an application's 3000-4999.
            guard let code = integer(closeNode, what: "'close'", in: 1000...4999, expected: "a close code (1000, or 3000 to 4999)") else { return nil }
            guard [1000, 1001, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014].contains(code) || code >= 3000 else {
                error("'close' must be a code a server may send: 1000, 1001, 1003, 1007 to 1014, or 3000 to 4999, not \(code)", at: closeNode)
                return nil
            }
            var reason = ""
            if let reasonNode = keyed["reason"] {
                guard let text = string(reasonNode, what: "'reason'") else { return nil }
                // A close frame's payload is at most 125 bytes, two of them the code.
                guard text.utf8.count <= 123 else {
                    error("'reason' holds at most 123 bytes (a close frame carries 125, the code included), not \(text.utf8.count)", at: reasonNode)
                    return nil
                }
                reason = text
            }
            endings.append(("close", .close(code: code, reason: reason)))
        } else if let reasonNode = keyed.key("reason") {
            error("'reason' goes with 'close: CODE'", at: reasonNode)
            return nil
        }
        guard endings.count == 1 else {
            if endings.isEmpty {
                error("'end' needs one of 'close: CODE', 'drop: true', 'stallPings: true', 'garbage: true', 'oversized: true', 'reset: true'", at: node)
            } else {
                error("'end' takes one ending, not \(endings.map { "'\($0.name)'" }.joined(separator: " and "))", at: node)
            }
            return nil
        }
        return WebSocketEnd(endings[0].ending, afterMilliseconds: after)
    }
}
