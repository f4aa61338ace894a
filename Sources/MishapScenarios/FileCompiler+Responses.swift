import MishapEngine
import MishapSupport

extension FileCompiler {
    static let responseKeys = ["status", "headers", "json", "text", "base64", "file", "contentType",
                               "delay", "hang", "dribble", "fault", "proxy",
                               "events", "repeat", "heartbeat", "websocket", "ranges"]
    static let bodyKeys = ["json", "text", "base64", "file"]
    /// The keys of a `delay` range and of a `dribble`, both required.
    static let delayRangeKeys = ("min", "max")
    static let dribbleKeys = ("chunks", "duration")
    /// Headers the server computes itself; declaring them would contradict the body it sends.
    static let reservedHeaders = ["content-length", "transfer-encoding", "date", "connection"]

    /// Each dribbled piece is scheduled per request; more pieces than this would only cost memory.
    static let maximumChunks = 10_000

    static let jsonContentType = "application/json; charset=utf-8"
    static let textContentType = "text/plain; charset=utf-8"

    /// A response: `status` (200 when left out), `headers`, at most one body (`json`: any YAML,
    /// sent as JSON; `text`; `base64`: raw bytes; `file`: a path relative to the scenario file),
    /// and how it is delivered: `delay`, `hang`, `dribble`, `fault`. Or, with `proxy`, the
    /// answer of an upstream server, with `headers` and the delivery keys on top.
    mutating func compileResponse(_ node: YAMLNode, defaultStatus: Int = 200) -> ResponseTemplate? {
        guard let keyed = mapping(node, allowedKeys: Self.responseKeys, what: "a response") else { return nil }
        var valid = true
        let proxy = keyed["proxy"].flatMap { compileProxy($0, keyed) }
        if keyed["proxy"] != nil && proxy == nil { valid = false }

        var status = defaultStatus
        if let statusNode = keyed["status"] {
            if let value = integer(statusNode, what: "'status'", in: 100...599, expected: "an HTTP status code from 100 to 599") {
                status = value
            } else {
                valid = false
            }
        }

        let bodies = Self.bodyKeys.compactMap { name in keyed.key(name).map { (name, $0) } }
        if bodies.count > 1 {
            error("a response has one body: '\(bodies[0].0)' and '\(bodies[1].0)' cannot both be given", at: bodies[1].1)
            valid = false
        }

        var body = Template(segments: [], escaping: .none)
        var contentType: String?
        if let json = keyed["json"] {
            if let segments = jsonSegments(json) { body = Template(segments: segments, escaping: .json) } else { valid = false }
            contentType = Self.jsonContentType
        } else if let text = keyed["text"] {
            if let value = string(text, what: "'text'"), let template = template(value, escaping: .none, at: text) {
                body = template
            } else {
                valid = false
            }
            contentType = Self.textContentType
        } else if let encoded = keyed["base64"] {
            if let value = string(encoded, what: "'base64'") {
                if let bytes = Base64.decode(value) {
                    body = Template(segments: [.literal(bytes)], escaping: .none)
                } else {
                    error("'base64' is not valid base64", at: encoded)
                    valid = false
                }
            } else {
                valid = false
            }
            contentType = "application/octet-stream"
        } else if let file = keyed["file"] {
            if let path = string(file, what: "'file'") {
                switch bodyFiles.read(path) {
                case .success(let bytes):
                    body = Template(segments: [.literal(bytes)], escaping: .none)
                    contentType = BodyFileResolver.contentType(forPath: path)
                case .failure(let problem):
                    error(problem.message, at: file)
                    valid = false
                }
            } else {
                valid = false
            }
        }
        if let typeNode = keyed["contentType"] {
            if let value = string(typeNode, what: "'contentType'") {
                if let problem = headerValueProblem(Template(literal: value)) {
                    error("'contentType': " + problem, at: typeNode)
                    valid = false
                }
                contentType = value
            } else {
                valid = false
            }
        }

        var headers: [(name: String, value: Template)] = []
        if let headersNode = keyed["headers"], let fields = namedMapping(headersNode, what: "'headers'") {
            for field in fields {
                if !field.name.allSatisfy(\.isHTTPTokenCharacter) {
                    error("'\(shown(field.name))' is not a valid header name", at: field.key)
                    valid = false
                    continue
                }
                if Self.reservedHeaders.contains(field.name.lowercased()) {
                    error("'\(shown(field.name))' is set by the server and cannot be declared", at: field.key)
                    valid = false
                    continue
                }
                guard let value = string(field.value, what: "a header value"),
                      let template = template(value, escaping: .header, at: field.value) else {
                    valid = false
                    continue
                }
                if let problem = headerValueProblem(template) {
                    error("'\(shown(field.name))': " + problem, at: field.value)
                    valid = false
                    continue
                }
                if field.name.lowercased() == "content-type" { contentType = nil }
                headers.append((field.name, template))
            }
        } else if keyed["headers"] != nil {
            valid = false
        }
        if let contentType {
            headers.insert(("Content-Type", Template(literal: contentType)), at: 0)
        }
        valid = headersFitResponseHead(headers, of: node, keyed: keyed) && valid
        var stream: StreamTemplate?
        if keyed["events"] != nil {
            // The events' compiler reads 'repeat', 'heartbeat' and the stream's 'fault' too.
            if let events = compileEventStream(keyed) { stream = .events(events) } else { valid = false }
        } else {
            for name in ["repeat", "heartbeat"] {
                guard let other = keyed.key(name) else { continue }
                error("'\(name)' belongs to a stream of events and needs 'events'", at: other)
                valid = false
            }
        }
        if let node = keyed["websocket"] {
            if let script = compileWebSocket(node, keyed) {
                stream = .webSocket(script)
                // What the journal and the log show: the upgrade, or the refusal.
                status = script.refuse ?? 101
            } else {
                valid = false
            }
        }
        var ranges: RangeSupport?
        if let node = keyed["ranges"] {
            if let support = compileRanges(node, keyed) { ranges = support } else { valid = false }
        }
        guard let delivery = compileDelivery(keyed, streaming: keyed["events"] != nil) else { return nil }
        guard valid else { return nil }
        return ResponseTemplate(status: status, headers: headers, body: body,
                                delay: delivery.delay, hang: delivery.hang, dribble: delivery.dribble, fault: delivery.fault,
                                proxy: proxy, stream: stream, ranges: ranges, sharing: sharedParts)
    }

    /// The keys that say what the answer is, which a `proxy` response leaves to its upstream.
    static let keysProxyDecides = ["status", "json", "text", "base64", "file", "contentType", "hang"]

    /// `proxy`: `upstream` (the server given with `--upstream`) or an `http`/`https` base URL.
    /// Nil, after reporting, when the value is neither, or `keyed` also says what the answer is.
    private mutating func compileProxy(_ node: YAMLNode, _ keyed: KeyedNodes) -> ProxyTarget? {
        var valid = true
        for name in Self.keysProxyDecides {
            guard let other = keyed.key(name) else { continue }
            let why = name == "hang"
                ? "'hang' never answers, so the upstream's answer would never be sent"
                : "'\(name)' cannot be combined with 'proxy': the upstream's answer gives the status and the body"
            error("\(why); 'proxy' takes 'headers', 'delay', 'dribble' and 'fault' to change how it is delivered", at: other)
            valid = false
        }
        guard let value = string(node, what: "'proxy'") else { return nil }
        let target: ProxyTarget
        if value == "upstream" {
            target = .serverUpstream
        } else if let problem = ProxyTarget.problem(with: value) {
            error("'proxy' \(problem): expected 'upstream' (the server given with --upstream) or a base URL such as http://127.0.0.1:9000", at: node)
            return nil
        } else if let problem = proxyProblem?(value) {
            error("'proxy' \(problem)", at: node)
            return nil
        } else {
            target = .url(value)
        }
        return valid ? target : nil
    }

    /// `delay`, `hang`, `dribble` and `fault`, checked against each other. With `streaming` (a
    /// response of `events:`), `fault` is the stream's, read by `compileEventStream`.
    private mutating func compileDelivery(_ keyed: KeyedNodes, streaming: Bool = false) -> (delay: Delay?, hang: Bool, dribble: Dribble?, fault: Fault?)? {
        var valid = true
        var delay: Delay?
        if let node = keyed["delay"] {
            if case .mapping = node {
                let range = bothValues(
                    node, keys: Self.delayRangeKeys, what: "'delay'",
                    missing: "a 'delay' range needs both 'min' and 'max' (milliseconds)",
                    { $0.duration($1, what: "'min'") }, { $0.duration($1, what: "'max'") })
                if case (let low, let high)? = range {
                    if low <= high { delay = .uniform(low...high) } else {
                        error("'delay' needs min <= max", at: node)
                        valid = false
                    }
                } else {
                    valid = false
                }
            } else if let value = duration(node, what: "'delay'") {
                delay = .fixed(value)
            } else {
                valid = false
            }
        }

        var hang = false
        if let node = keyed["hang"] {
            if let flag = boolean(node, what: "'hang'") { hang = flag } else { valid = false }
        }

        var dribble: Dribble?
        if let node = keyed["dribble"] {
            let spec = bothValues(
                node, keys: Self.dribbleKeys, what: "'dribble'",
                missing: "'dribble' needs 'chunks' (how many pieces) and 'duration' (over how long)",
                { $0.integer($1, what: "'chunks'", in: 1...Self.maximumChunks, expected: "from 1 to \(Self.maximumChunks)") },
                { $0.duration($1, what: "'duration'") })
            if case (let chunks, let length)? = spec {
                dribble = Dribble(chunks: chunks, milliseconds: length)
            } else {
                valid = false
            }
        }

        var fault: Fault?
        if !streaming, let node = keyed["fault"] {
            let names = Fault.allCases.map(\.rawValue)
            if let name = string(node, what: "'fault'") {
                if let value = Fault(rawValue: name) { fault = value } else {
                    error("unknown fault '\(shown(name))'\(hint(for: name, in: names)); expected one of \(names.joined(separator: ", "))", at: node)
                    valid = false
                }
            } else {
                valid = false
            }
        }

        if hang, let other = keyed.key("dribble") ?? keyed.key("fault") {
            error("'hang' never answers, so '\(shown(other.scalar?.string ?? ""))' would never happen", at: other)
            valid = false
        }
        if dribble != nil, let fault = keyed.key("fault") {
            error("'dribble' sends a whole response slowly and cannot be combined with 'fault'", at: fault)
            valid = false
        }
        return valid ? (delay, hang, dribble, fault) : nil
    }

    /// The two values of a mapping that needs both its keys (a `delay` range's `min` and `max`,
    /// a `dribble`'s `chunks` and `duration`), each read by its function. Nil, after reporting,
    /// when the mapping or a value is wrong, or a key is missing (reported as `missing`).
    private mutating func bothValues<First, Second>(
        _ node: YAMLNode, keys: (String, String), what: String, missing: String,
        _ first: (inout FileCompiler, YAMLNode) -> First?, _ second: (inout FileCompiler, YAMLNode) -> Second?
    ) -> (First, Second)? {
        guard let spec = mapping(node, allowedKeys: [keys.0, keys.1], what: what) else { return nil }
        let firstValue = spec[keys.0].flatMap { first(&self, $0) }
        let secondValue = spec[keys.1].flatMap { second(&self, $0) }
        guard let firstValue, let secondValue else {
            if spec[keys.0] == nil || spec[keys.1] == nil { error(missing, at: node) }
            return nil
        }
        return (firstValue, secondValue)
    }

    /// Milliseconds, written as a number (`300`) or with a unit (`300ms`, `1.5s`, `2m`, `1h`),
    /// at most a day.
    mutating func duration(_ node: YAMLNode, what: String) -> Int? {
        guard let text = node.scalar?.string else {
            error("\(what) must be a duration in milliseconds, like 300 or '2s'", at: node)
            return nil
        }
        switch DurationText.milliseconds(text) {
        case .success(let milliseconds):
            return milliseconds
        case .failure(.malformed):
            error("\(what) must be a duration in milliseconds, like 300 or '2s' (units: ms, s, m, h), not '\(shown(text))'", at: node)
        case .failure(let problem):
            error("\(what) \(problem.words)", at: node)
        }
        return nil
    }

    // MARK: JSON bodies

    /// Writes a YAML tree as JSON text, with placeholders inside strings escaped at render time.
    ///
    /// The text between two placeholders is written into one buffer as it comes (`run`), not
    /// made a segment of its own for each brace, comma and string: a body's dozens of small
    /// arrays were each allocated here and freed when the template merged them.
    mutating func jsonSegments(_ node: YAMLNode) -> [Template.Segment]? {
        var segments: [Template.Segment] = []
        var run: [UInt8] = []
        var valid = true
        func literal(_ text: String) { run.append(contentsOf: text.utf8) }
        // A segment gets a copy of its exact size: the buffer grew by doubling, and a template
        // keeps its literals for as long as its rule set is loaded.
        func flush() {
            if run.isEmpty { return }
            segments.append(.literal(Array(run)))
            run.removeAll(keepingCapacity: true)
        }
        func quoted(_ text: String, at node: YAMLNode, _ compiler: inout FileCompiler) {
            literal("\"")
            guard let parts = compiler.placeholderParts(text, at: node) else { valid = false; return }
            for part in parts {
                switch part {
                case .text(let text):
                    JSONEscaping.appendEscaped(text, to: &run)
                case .value(let source):
                    flush()
                    segments.append(.value(source))
                }
            }
            literal("\"")
        }
        func write(_ node: YAMLNode, _ compiler: inout FileCompiler) {
            switch node {
            case .scalar(let scalar):
                switch YAMLScalar.resolve(scalar) {
                case .null: literal("null")
                case .bool(let value): literal(value ? "true" : "false")
                case .number(let text): literal(text)
                case .string(let text): quoted(text, at: node, &compiler)
                }
            case .sequence(let sequence):
                literal("[")
                for (i, item) in sequence.enumerated() {
                    if i > 0 { literal(",") }
                    write(item, &compiler)
                }
                literal("]")
            case .mapping(let mapping):
                literal("{")
                for (i, pair) in mapping.enumerated() {
                    if i > 0 { literal(",") }
                    guard let key = pair.key.scalar?.string else {
                        compiler.error("JSON object keys must be strings", at: pair.key)
                        valid = false
                        continue
                    }
                    quoted(key, at: pair.key, &compiler)
                    literal(":")
                    write(pair.value, &compiler)
                }
                literal("}")
            }
        }
        write(node, &self)
        flush()
        return valid ? segments : nil
    }
}

extension Character {
    /// RFC 9110 token characters, the ones a header name may use.
    var isHTTPTokenCharacter: Bool {
        guard isASCII, let ascii = asciiValue else { return false }
        if isLetter || isNumber { return true }
        return "!#$%&'*+-.^_`|~".utf8.contains(ascii)
    }
}
