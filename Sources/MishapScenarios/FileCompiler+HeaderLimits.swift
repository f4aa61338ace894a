import MishapEngine

extension FileCompiler {
    /// Whether a response's headers can fit `ResponseHead.maximumHeaderBytes`, counting their
    /// fixed text: names, and values without their placeholders (a placeholder adds what the
    /// request brings, checked when the response is planned). Headers over the limit could never
    /// be sent, so they are reported here, at the header that takes them over it: its value in
    /// `headers`, or `contentType` for the `Content-Type` that key sets.
    mutating func headersFitResponseHead(_ headers: [(name: String, value: Template)], of response: YAMLNode,
                                         keyed: KeyedNodes) -> Bool {
        let limit = ResponseHead.maximumHeaderBytes
        var total = 0
        var placeholders = false
        var over: String?
        for header in headers {
            total += header.name.utf8.count + 4
            for segment in header.value.segments {
                switch segment {
                case .literal(let bytes): total += bytes.count
                case .value: placeholders = true
                }
            }
            if total > limit && over == nil { over = header.name }
        }
        guard let over else { return true }
        let size = placeholders ? "at least \(total) bytes without their placeholders" : "\(total) bytes"
        let message = "the response's headers take \(size) (each counted as its name, ': ', its value and CRLF), "
            + "over the limit of \(limit) bytes for a response's headers"
        error(message, at: headerValueNode(named: over, of: response, keyed: keyed))
        return false
    }

    /// Where the header `name` is written: its value in `headers`, or `contentType`; the response
    /// itself when neither (a body's own `Content-Type` is short, so never the one).
    private func headerValueNode(named name: String, of response: YAMLNode, keyed: KeyedNodes) -> YAMLNode {
        if case .mapping(let declared)? = keyed["headers"],
           let pair = declared.pairs.last(where: { $0.key.scalar?.string == name }) {
            return pair.value
        }
        if name == "Content-Type", let contentType = keyed["contentType"] { return contentType }
        return response
    }
}
