import MishapScenarios

/// The transport failures every imported endpoint gets, as in the default scenarios' catalogue
/// (docs/default-scenarios.md): a reset, a connection closed without a byte, garbage, bodies cut
/// short three ways, a hang, a slow answer and a dribbled one. Each answers only when forced.
enum TransportCatalogue {
    /// The catalogue's rules for an endpoint whose success answer is `status` and `body`, named
    /// in `names` (a name the endpoint has already gets a number).
    static func rules(success status: Int, body: ImportedRule.Body, names: inout RuleNames) -> [ImportedRule] {
        func rule(_ name: String, _ comment: String, _ delivery: [String], body withBody: Bool) -> ImportedRule {
            ImportedRule(name: names.name(name), comment: comment, status: status, body: withBody ? body : .none, delivery: delivery)
        }
        return [
            rule("reset", "a TCP reset (ECONNRESET)", ["fault: reset"], body: false),
            rule("dropped", "the connection closed without a byte", ["fault: close"], body: false),
            rule("garbage", "64 random bytes that are not HTTP, then a close", ["fault: garbage"], body: false),
            rule("truncated", "Content-Length larger than the body sent, then a close", ["fault: truncate"], body: true),
            rule("truncatedChunked", "a chunked body without its last chunk", ["fault: truncate-chunked"], body: true),
            rule("lengthMismatch", "Content-Length smaller than the body", ["fault: content-length-mismatch"], body: true),
            rule("timeout", "no answer: the request is held until the client gives up", ["hang: true"], body: false),
            rule("slowpoke", "the success answer after 1.5 to 3 s", ["delay: { min: 1500, max: 3000 }"], body: true),
            rule("trickle", "the success answer in 5 pieces over 5 s", ["dribble: { chunks: 5, duration: 5s }"], body: true),
        ]
    }
}
