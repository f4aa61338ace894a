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

    /// Why a header value cannot be sent as written, or nil: empty (libmicrohttpd leaves an
    /// empty value out), or holding a line break (it would end the header; libmicrohttpd leaves
    /// the header out), NUL (it would cut the value) or another control character but tab (not
    /// allowed in a field value by RFC 9110). Only its written text is checked: what a
    /// placeholder brings has its control characters removed as the response is made.
    func headerValueProblem(_ value: Template) -> String? {
        var empty = true
        for segment in value.segments {
            guard case .literal(let bytes) = segment else {
                empty = false
                continue
            }
            empty = empty && bytes.isEmpty
            for byte in bytes {
                switch byte {
                case 0x0D, 0x0A:
                    return "a header value must not hold a line break (CR or LF): it would end the header"
                case 0x00:
                    return "a header value must not hold NUL: it would cut the value short"
                case 0x09:
                    continue
                case 0..<0x20, 0x7F:
                    return "a header value must not hold control characters (tab is the only one allowed)"
                default:
                    continue
                }
            }
        }
        if empty {
            return "a header value must not be empty: an empty header cannot be sent; leave the header out"
        }
        return nil
    }
}
