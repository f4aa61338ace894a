import Foundation

/// Valid scenario texts that between them use every feature of the format: what the scenario
/// fuzz tests mutate, in process and through the `mishap` binary.
public enum ScenarioCorpus {
    /// Two endpoints with cycles, sessions, `chance`, delays, dribbles, faults, hangs,
    /// placeholders, every kind of condition, and json, text and base64 bodies.
    public static let everything = """
        endpoints:
          - endpoint: GET /users/{id}/items/*
            rules:
              - name: maintenance
                when: { query: { mode: maintenance } }
                cycle:
                  - { status: 503, headers: { Retry-After: "{{now+30s}}" }, json: { error: true, id: "{{path.id}}" } }
                  - pass
              - name: slow
                when:
                  - { headers: { X-Speed: [slow, slower] } }
                  - { query: { slow: { present: true } } }
                chance: 0.5
                respond:
                  delay: { min: 10, max: 2s }
                  text: "slow {{request.method}} {{request.path}}"
              - name: trickle
                when: { query: { q: { minLength: 2, maxLength: 10, not: { prefix: x } } } }
                respond: { dribble: { chunks: 5, duration: 50ms }, base64: "aGVsbG8=", contentType: application/x-test }
              - name: broken
                when: { query: { q: { matches: "^(a+)+$" } } }
                respond: { fault: reset, delay: 5 }
              - name: hang
                when: { headers: { X-Hang: { equals: "yes" } } }
                respond: { hang: true }
              - name: fallback
                respond: { status: 200, json: { ok: true, n: 1.5, list: [1, "two", null, false], nested: { a: { b: "{{query.q}}" } } } }
          - endpoint: POST /login
            rules:
              - name: malformed
                when: { malformedBody: true }
                respond: { status: 400, text: bad }
              - name: login
                when: { body: { user.email: { suffix: "@x.com", contains: "@" }, password: { length: 8 } } }
                respond: { status: 201, headers: { Set-Cookie: "s={{body.user.email}}" }, json: { token: abc } }
              - name: other
                when: { body: { email: { oneOf: [a, b] }, password: { absent: false } } }
                respond: { status: 404, json: { error: "no {{body.email}}" } }
        """

    /// A cycle written once and repeated through an alias.
    public static let anchors = """
        endpoint: ANY /anchors
        rules:
          - name: flaky
            cycle:
              - &down { status: 500, headers: { Retry-After: "1" }, json: { error: true } }
              - *down
              - pass
          - name: ok
            respond: { json: { steps: [*down, *down] } }
        """

    /// JSON syntax, which is YAML too.
    public static let json = """
        {"endpoint": "PUT /json/{name}", "rules": [
          {"name": "named", "when": {"path": {"name": {"oneOf": ["a", "b"]}}}, "respond": {"status": 202, "json": {"name": "{{path.name}}"}}},
          {"name": "truncated", "respond": {"fault": "truncate-chunked", "text": "abc"}}
        ]}
        """

    /// Every fault, headers in block style, a block scalar body.
    public static let faults = """
        endpoints:
          - endpoint: DELETE /faults/{kind}
            rules:
              - { name: reset, when: { path: { kind: reset } }, respond: { fault: reset } }
              - { name: close, when: { path: { kind: close } }, respond: { fault: close, delay: 1 } }
              - { name: garbage, when: { path: { kind: garbage } }, respond: { fault: garbage, text: "not http" } }
              - { name: truncate, when: { path: { kind: truncate } }, respond: { fault: truncate, json: [1, 2, 3] } }
              - { name: chunked, when: { path: { kind: chunked } }, respond: { fault: truncate-chunked, text: abc } }
              - { name: mismatch, when: { path: { kind: mismatch } }, respond: { fault: content-length-mismatch, text: abcdef } }
              - { name: absent, when: { query: { x: { absent: true } } }, respond: { status: 418, headers: { X-A: "{{headers.X-B}}", Expires: "{{now-60s}}" } } }
          - endpoint: OPTIONS /
            rules:
              - name: options
                respond:
                  status: 200
                  headers:
                    Allow: GET, POST
                  text: |
                    multi
                    line {{query.x}}
        """

    /// The four texts above.
    public static let inline = [everything, anchors, json, faults]

    /// The texts mutated: the `.yaml` files of `directory` (the repository's scenarios), by
    /// name, then the inline ones.
    public static func bases(scenarios directory: String) -> [String] {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.sorted()
        return files.compactMap { try? String(contentsOfFile: directory + "/" + $0, encoding: .utf8) } + inline
    }

    /// The methods an endpoint may name.
    public static let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "ANY"]

    /// `text` with every endpoint moved under `/PREFIX/`, so files of one folder do not clash.
    public static func prefixingPaths(_ text: String, with prefix: String) -> String {
        methods.reduce(text) { $0.replacingOccurrences(of: "\($1) /", with: "\($1) /\(prefix)/") }
    }

    /// The most lines a reader of `text` can count: YAML also breaks lines at `\r`, NEL and the
    /// Unicode separators.
    public static func maximumLine(_ text: String) -> Int {
        var text = text
        return text.withUTF8 { maximumLine(in: $0) }
    }

    /// The most lines a reader of the UTF-8 `bytes` can count, as `maximumLine(_:)` of a text.
    public static func maximumLine(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { maximumLine(in: $0) }
    }

    private static func maximumLine(in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var lines = 1
        for index in bytes.indices {
            switch bytes[index] {
            case 0x0A, 0x0D: lines += 1
            case 0x85 where index > 0 && bytes[index - 1] == 0xC2: lines += 1
            case 0xA8...0xA9 where index > 1 && bytes[index - 1] == 0x80 && bytes[index - 2] == 0xE2: lines += 1
            default: break
            }
        }
        return lines
    }
}
