import MishapEngine

/// Network profiles as written: `network: edge` on an endpoint or a rule of a scenario file, and
/// the body of `PUT /__mishap/network` (`NetworkProfileReader`). A preset's name, or a mapping of
/// the profile's keys, which may start from a preset (`preset: edge`) and change some of it.
extension FileCompiler {
    static let networkKeys = ["preset", "latency", "jitter", "latencyPerChunk", "bandwidth", "loss", "resetAfterBytes",
                              "slowClose", "upload", "offline"]
    static let latencyKeys = ["min", "max", "median", "spread", "mean", "deviation"]
    static let bandwidthKeys = ["down", "up"]
    static let uploadKeys = ["stallAfterBytes", "resetAfterBytes", "answerEarly"]

    /// A profile, or nil after reporting its problems. `bare` is what a duration without a unit
    /// counts (milliseconds in files, seconds in admin calls); `offline` is accepted only where
    /// it has a moment to start from (`allowOffline`: set at runtime).
    mutating func compileNetwork(_ node: YAMLNode, bare: DurationText.BareUnit = .milliseconds,
                                 allowOffline: Bool = false) -> NetworkProfile? {
        if node.scalar != nil {
            guard let name = string(node, what: "'network'") else { return nil }
            return preset(name, at: node)
        }
        guard let keyed = mapping(node, allowedKeys: Self.networkKeys, what: "a network profile") else { return nil }
        var base = NetworkProfile()
        var valid = true
        if let presetNode = keyed["preset"] {
            guard let name = string(presetNode, what: "'preset'"), let found = preset(name, at: presetNode) else { return nil }
            base = found
        }
        var latency = base.latency
        if let value = keyed["latency"] {
            if let parsed = compileLatency(value, bare: bare) { latency = parsed } else { valid = false }
        }
        var jitter = base.jitterMilliseconds
        if let value = keyed["jitter"] {
            if let parsed = duration(value, what: "'jitter'", bare: bare) { jitter = parsed } else { valid = false }
        }
        var perChunk = base.latencyPerChunk
        if let value = keyed["latencyPerChunk"] {
            if let parsed = boolean(value, what: "'latencyPerChunk'") { perChunk = parsed } else { valid = false }
        }
        var down = base.downBytesPerSecond, up = base.upBytesPerSecond
        if let value = keyed["bandwidth"] {
            if let parsed = compileBandwidth(value) {
                down = parsed.down ?? down
                up = parsed.up ?? up
            } else {
                valid = false
            }
        }
        var loss = base.loss
        if let value = keyed["loss"] {
            if let parsed = fraction(value, what: "'loss'", meaning: "the fraction of requests reset before any byte") {
                loss = parsed
            } else {
                valid = false
            }
        }
        var resetAfter = base.resetAfter
        if let value = keyed["resetAfterBytes"] {
            if let parsed = byteMark(value, what: "'resetAfterBytes'") { resetAfter = parsed } else { valid = false }
        }
        var slowClose = base.slowCloseMilliseconds
        if let value = keyed["slowClose"] {
            if let parsed = duration(value, what: "'slowClose'", bare: bare) { slowClose = parsed } else { valid = false }
        }
        var upload = base.upload
        if let value = keyed["upload"] {
            if let parsed = compileUpload(value) { upload = parsed } else { valid = false }
        }
        var offline: Int?
        if let value = keyed["offline"] {
            if !allowOffline {
                error("'offline' is set at runtime (PUT /__mishap/network, 'mishap network'), from the moment it is set; "
                      + "a scenario file or a server default has no such moment", at: keyed.key("offline")!)
                valid = false
            } else if let parsed = duration(value, what: "'offline'", bare: bare) {
                offline = parsed
            } else {
                valid = false
            }
        }
        guard valid else { return nil }
        let unchanged = keyed.pairs.count == 1 && keyed["preset"] != nil
        return NetworkProfile(name: unchanged ? base.name : nil, latency: latency, jitterMilliseconds: jitter,
                              latencyPerChunk: perChunk, downBytesPerSecond: down, upBytesPerSecond: up, loss: loss,
                              resetAfter: resetAfter, slowCloseMilliseconds: slowClose, upload: upload,
                              offlineMilliseconds: offline)
    }

    private mutating func preset(_ name: String, at node: YAMLNode) -> NetworkProfile? {
        if let profile = NetworkPresets.named(name) { return profile }
        let names = NetworkPresets.names
        error("unknown network preset '\(shown(name))'\(hint(for: name.lowercased(), in: names)); "
              + "expected one of \(names.joined(separator: ", ")), or a profile mapping", at: node)
        return nil
    }

    /// `300ms`; `{min, max}` (uniform); `{median, spread}` (log-normal, spread a factor of 1 or
    /// more); `{mean, deviation}` (normal).
    private mutating func compileLatency(_ node: YAMLNode, bare: DurationText.BareUnit) -> NetworkLatency? {
        if node.scalar != nil {
            return duration(node, what: "'latency'", bare: bare).map(NetworkLatency.fixed)
        }
        guard let keyed = mapping(node, allowedKeys: Self.latencyKeys, what: "a 'latency' distribution") else { return nil }
        let names = Set(keyed.pairs.map(\.name))
        let forms: [(Set<String>, String)] = [(["min", "max"], "uniform"), (["median", "spread"], "log-normal"),
                                              (["mean", "deviation"], "normal")]
        guard let form = forms.first(where: { $0.0 == names }) else {
            error("a 'latency' distribution is {min, max} (uniform), {median, spread} (log-normal) or {mean, deviation} (normal)",
                  at: node)
            return nil
        }
        switch form.1 {
        case "uniform":
            guard let low = duration(keyed["min"]!, what: "'min'", bare: bare),
                  let high = duration(keyed["max"]!, what: "'max'", bare: bare) else { return nil }
            guard low <= high else {
                error("'latency' needs min <= max", at: node)
                return nil
            }
            return .uniform(low...high)
        case "log-normal":
            guard let median = duration(keyed["median"]!, what: "'median'", bare: bare) else { return nil }
            guard let spread = keyed["spread"]!.scalar.flatMap({ Double($0.string) }), spread.isFinite, spread >= 1, spread <= 100 else {
                error("'spread' must be a number from 1 to 100 (the factor two draws in three fall within, around the median)",
                      at: keyed["spread"]!)
                return nil
            }
            return .logNormal(medianMilliseconds: median, spread: spread)
        default:
            guard let mean = duration(keyed["mean"]!, what: "'mean'", bare: bare),
                  let deviation = duration(keyed["deviation"]!, what: "'deviation'", bare: bare) else { return nil }
            return .normal(meanMilliseconds: mean, deviationMilliseconds: deviation)
        }
    }

    /// `{down: 20kB/s, up: 8kB/s}`, or one rate for both directions.
    private mutating func compileBandwidth(_ node: YAMLNode) -> (down: Int?, up: Int?)? {
        if node.scalar != nil {
            guard let rate = bandwidth(node, what: "'bandwidth'") else { return nil }
            return (rate, rate)
        }
        guard let keyed = mapping(node, allowedKeys: Self.bandwidthKeys, what: "'bandwidth'") else { return nil }
        var down: Int?, up: Int?, valid = true
        if let value = keyed["down"] {
            down = bandwidth(value, what: "'down'")
            valid = valid && down != nil
        }
        if let value = keyed["up"] {
            up = bandwidth(value, what: "'up'")
            valid = valid && up != nil
        }
        return valid ? (down, up) : nil
    }

    private mutating func bandwidth(_ node: YAMLNode, what: String) -> Int? {
        guard let text = node.scalar?.string else {
            error("\(what) must be a rate, like '20kB/s' or '780kbps'", at: node)
            return nil
        }
        switch BandwidthText.bytesPerSecond(text) {
        case .success(let rate): return rate
        case .failure(let problem):
            error("\(what) \(problem.words), not '\(shown(text))'", at: node)
            return nil
        }
    }

    /// `{stallAfterBytes: N}`, `{resetAfterBytes: N}` or `{answerEarly: 413}`: one of them.
    private mutating func compileUpload(_ node: YAMLNode) -> UploadFault? {
        guard let keyed = mapping(node, allowedKeys: Self.uploadKeys, what: "'upload'") else { return nil }
        guard keyed.pairs.count == 1, let (name, _, value) = keyed.pairs.first else {
            error("'upload' takes one of 'stallAfterBytes', 'resetAfterBytes' or 'answerEarly'", at: node)
            return nil
        }
        switch name {
        case "stallAfterBytes":
            return integer(value, what: "'stallAfterBytes'", in: 0...Int(Int32.max), expected: "0 or more").map(UploadFault.stallAfterBytes)
        case "resetAfterBytes":
            return integer(value, what: "'resetAfterBytes'", in: 0...Int(Int32.max), expected: "0 or more").map(UploadFault.resetAfterBytes)
        default:
            return integer(value, what: "'answerEarly'", in: 200...599, expected: "a status from 200 to 599 (401, 413, ...)")
                .map(UploadFault.answerEarly)
        }
    }

    /// A fraction from 0 to 1, written `0.1` or `10%`.
    private mutating func fraction(_ node: YAMLNode, what: String, meaning: String) -> Double? {
        guard let text = node.scalar?.string, let value = Self.fraction(text) else {
            error("\(what) must be a number from 0 to 1, or a percentage like '10%' (\(meaning))", at: node)
            return nil
        }
        return value
    }

    static func fraction(_ text: String) -> Double? {
        let percent = text.hasSuffix("%")
        guard let number = Double(percent ? String(text.dropLast()) : text), number.isFinite else { return nil }
        let value = percent ? number / 100 : number
        return (0...1).contains(value) ? value : nil
    }

    /// A byte count, or a percentage of `whole` (`40%`): a profile's reset, a range's cut.
    mutating func byteMark(_ node: YAMLNode, what: String, of whole: String = "the body") -> ByteMark? {
        guard let text = node.scalar?.string else {
            error("\(what) must be a number of bytes, or a percentage of \(whole) like '40%'", at: node)
            return nil
        }
        if text.hasSuffix("%") {
            guard let value = Self.fraction(text) else {
                error("\(what) must be a percentage from 0% to 100%", at: node)
                return nil
            }
            return .fraction(value)
        }
        return integer(node, what: what, in: 0...Int(Int32.max), expected: "0 or more bytes, or a percentage like '40%'")
            .map(ByteMark.bytes)
    }

    /// A duration counting `bare` when written without a unit.
    private mutating func duration(_ node: YAMLNode, what: String, bare: DurationText.BareUnit) -> Int? {
        guard bare == .seconds else { return duration(node, what: what) }
        guard let text = node.scalar?.string else {
            error("\(what) must be a duration, like '300ms' or '2s'", at: node)
            return nil
        }
        switch DurationText.milliseconds(text, bare: .seconds) {
        case .success(let milliseconds): return milliseconds
        case .failure(let problem):
            error("\(what) \(problem.words)", at: node)
            return nil
        }
    }
}
