import MishapEngine

/// `ranges:` on a response: `true`, or a mapping of options (`etag`, `fault`,
/// `resetAfterBytes`, `closeAfterBytes`). See docs/downloads.md.
extension FileCompiler {
    static let rangesKeys = ["etag", "fault", "resetAfterBytes", "closeAfterBytes"]
    /// The keys of a response that hold a stream or another server's answer, which have no
    /// body of the rule's own to answer `Range` requests from.
    static let keysWithoutRanges = ["proxy", "events", "websocket", "hang"]
    /// Headers `ranges:` sends itself; declaring them too would contradict it.
    static let rangeHeaders = ["etag", "accept-ranges", "content-range"]

    /// `ranges:` on a response with a body. Nil, after reporting, when it is wrong.
    mutating func compileRanges(_ node: YAMLNode, _ keyed: KeyedNodes) -> RangeSupport? {
        var valid = rangesFitResponse(keyed)
        if let scalar = node.scalar {
            guard YAMLScalar.boolean(scalar) == true else {
                error("'ranges' must be true or a mapping of 'etag', 'fault', 'resetAfterBytes' and 'closeAfterBytes'; leave it out to send the whole body always", at: node)
                return nil
            }
            return valid ? RangeSupport() : nil
        }
        guard let options = mapping(node, allowedKeys: Self.rangesKeys, what: "'ranges'") else { return nil }
        var support = RangeSupport()
        if let value = options["etag"] {
            if let text = string(value, what: "'etag'") {
                if RangeSupport.isEntityTag(text) { support.etag = text } else {
                    error("'etag' must be an entity tag in double quotes, like '\"v1\"' (or weak, 'W/\"v1\"'), not '\(shown(text))'", at: value)
                    valid = false
                }
            } else {
                valid = false
            }
        }
        if let value = options["fault"] {
            let names = RangeFault.allCases.map(\.rawValue)
            if let name = string(value, what: "'fault'") {
                if let fault = RangeFault(rawValue: name) { support.fault = fault } else {
                    error("unknown range fault '\(shown(name))'\(hint(for: name, in: names)); expected one of \(names.joined(separator: ", "))", at: value)
                    valid = false
                }
            } else {
                valid = false
            }
        }
        let reset = options["resetAfterBytes"], close = options["closeAfterBytes"]
        if reset != nil, let other = options.key("closeAfterBytes") {
            error("'resetAfterBytes' and 'closeAfterBytes' cannot both be given: the connection breaks once", at: other)
            valid = false
        } else if let value = reset ?? close {
            let name = reset != nil ? "'resetAfterBytes'" : "'closeAfterBytes'"
            if let mark = byteMark(value, what: name, of: "the body sent") { support.cut = RangeCut(mark: mark, closes: reset == nil) } else { valid = false }
        }
        if reset != nil || close != nil, let other = keyed.key("dribble") {
            let name = reset != nil ? "resetAfterBytes" : "closeAfterBytes"
            error("'\(name)' cannot be combined with 'dribble': the connection breaks on the way, a dribble sends the whole body slowly", at: other)
            valid = false
        }
        return valid ? support : nil
    }

    /// Whether the rest of the response can answer `Range` requests: a body of its own (any of
    /// `bodyKeys`), status 200, and no `ETag`, `Accept-Ranges` or `Content-Range` declared.
    private mutating func rangesFitResponse(_ keyed: KeyedNodes) -> Bool {
        var valid = true
        for name in Self.keysWithoutRanges {
            guard let other = keyed.key(name) else { continue }
            error("'ranges' answers Range requests from the response's own body and cannot be combined with '\(name)'", at: other)
            valid = false
        }
        if valid, !Self.bodyKeys.contains(where: { keyed[$0] != nil }), let place = keyed.key("ranges") {
            error("'ranges' needs a body to answer Range requests from: 'file', 'text', 'base64' or 'json'", at: place)
            valid = false
        }
        if let statusNode = keyed["status"], let scalar = statusNode.scalar, let status = Int(scalar.string), status != 200 {
            error("'ranges' answers a 200 response (206 and 416 are its own); 'status' is \(status)", at: statusNode)
            valid = false
        }
        if let headers = keyed["headers"], case .mapping(let mapping) = headers {
            for (key, _) in mapping {
                guard let name = key.scalar?.string, Self.rangeHeaders.contains(name.lowercased()) else { continue }
                let hint = name.lowercased() == "etag" ? "; declare it with 'ranges: { etag: ... }'" : ""
                error("'\(shown(name))' is set by 'ranges' and cannot be declared\(hint)", at: key)
                valid = false
            }
        }
        return valid
    }
}
