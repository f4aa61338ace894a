import MishapEngine

extension FileCompiler {
    static let fileKeys = ["state", "endpoint", "rules", "endpoints", "extends", "before", "quota", "network"]
    static let endpointKeys = ["endpoint", "rules", "extends", "before", "quota", "network"]
    static let ruleKeys = ["name", "aliases", "when", "chance", "set", "quota", "network", "respond", "cycle"]
    static let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "ANY"]

    /// A file holds one endpoint (`endpoint:` and `rules:`) or several (`endpoints:`, a list of them).
    mutating func compileFile(_ root: YAMLNode) -> [(Endpoint, YAMLNode)] {
        guard let file = mapping(root, allowedKeys: Self.fileKeys, what: "a scenario file") else { return [] }
        // A file may only declare state (read before any file is compiled).
        if file["state"] != nil && file.pairs.count == 1 { return [] }
        if let list = file["endpoints"] {
            if let stray = file.key("endpoint") ?? file.key("extends") ?? file.key("rules") ?? file.key("quota") ?? file.key("network") {
                error("a file has either 'endpoints:' (a list) or one 'endpoint:' with its 'rules:', not both", at: stray)
            }
            guard let items = sequence(list, what: "'endpoints'") else { return [] }
            return items.compactMap { item in
                guard let keyed = mapping(item, allowedKeys: Self.endpointKeys, what: "an endpoint") else { return nil }
                return compileEndpoint(keyed, at: item)
            }
        }
        return compileEndpoint(file, at: root).map { [$0] } ?? []
    }

    /// An endpoint declared here, or, with `extends:`, rules added to one declared in another
    /// file (kept in `extensions`, placed once every file is compiled; nil is returned).
    private mutating func compileEndpoint(_ keyed: KeyedNodes, at node: YAMLNode) -> (Endpoint, YAMLNode)? {
        let extending = keyed["extends"]
        if extending != nil, let stray = keyed.key("endpoint") {
            error("an entry declares an endpoint ('endpoint:') or adds rules to one declared elsewhere ('extends:'), not both", at: stray)
            return nil
        }
        if extending == nil, let stray = keyed.key("before") {
            error("'before:' places rules added with 'extends:'; an endpoint's own rules are tried in file order", at: stray)
        }
        if extending != nil, let stray = keyed.key("quota") {
            error("an endpoint's 'quota:' goes with its declaration ('endpoint:'); rules added with 'extends:' may each have one", at: stray)
        }
        if extending != nil, let stray = keyed.key("network") {
            error("an endpoint's 'network:' goes with its declaration ('endpoint:'); rules added with 'extends:' may each have one", at: stray)
        }
        guard let endpointNode = extending ?? keyed["endpoint"] else {
            error("missing 'endpoint:' (for example 'endpoint: GET /login')", at: node)
            return nil
        }
        guard let rulesNode = keyed["rules"] else {
            error("endpoint has no 'rules:'", at: node)
            return nil
        }
        guard let declaration = string(endpointNode, what: "'endpoint'") else { return nil }
        guard declaration.utf8.count <= Self.maximumEndpointLength else {
            error("'endpoint' must be at most \(Self.maximumEndpointLength) bytes long", at: endpointNode)
            return nil
        }
        let parts = declaration.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2 else {
            error("'endpoint' must be a method and a path, for example 'GET /isUserNameAvailable'", at: endpointNode)
            return nil
        }
        let method = parts[0].uppercased()
        guard Self.methods.contains(method) else {
            error("unknown method '\(shown(parts[0]))'\(hint(for: method, in: Self.methods)); expected one of \(Self.methods.joined(separator: ", "))", at: endpointNode)
            return nil
        }
        guard let path = PathPattern(String(parts[1])) else {
            error("'\(shown(parts[1]))' is not a path: it must start with '/', '{name}' must fill a whole segment and '*' may only end it", at: endpointNode)
            return nil
        }
        guard let ruleNodes = sequence(rulesNode, what: "'rules'") else { return nil }
        if ruleNodes.isEmpty { error("'rules' is empty: an endpoint needs at least one rule", at: rulesNode) }

        var rules: [Rule] = []
        var ruleNames: [[(name: String, node: YAMLNode)]] = []
        // Names and aliases select rules in `X-Mishap-Rule`, in any case: unique, folded.
        var names: [String: YAMLNode] = [:]
        let endpointName = "\(method) \(path)"
        for ruleNode in ruleNodes {
            guard let (rule, nameNodes) = compileRule(ruleNode, path: path, endpoint: endpointName) else { continue }
            var clash = false
            for (position, (name, node)) in nameNodes.enumerated() {
                if let first = names[name.lowercased()] {
                    let what = position == 0 ? "rule name" : "alias"
                    let folded = first.scalar?.string == name ? "" : " (X-Mishap-Rule compares names and aliases in any case)"
                    error("duplicate \(what) '\(shown(name))'\(folded) (first at \(displayPath):\(first.mark.line):\(first.mark.column))", at: node)
                    clash = true
                } else {
                    names[name.lowercased()] = node
                }
            }
            if !clash {
                rules.append(rule)
                ruleNames.append(nameNodes)
            }
        }
        if let extending {
            var before: (name: String, node: YAMLNode)?
            if let beforeNode = keyed["before"], let name = string(beforeNode, what: "'before' (the name of a rule of the endpoint)") {
                before = (name, beforeNode)
            }
            extensions.append(EndpointExtension(file: displayPath, target: endpointName, targetNode: extending, rules: rules,
                                                names: ruleNames, before: before))
            return nil
        }
        var quota: Quota?
        if extending == nil, let quotaNode = keyed["quota"] {
            quota = compileQuota(quotaNode, stateKey: Self.stateKey(endpoint: endpointName, rule: quotaNode) + "\nquota")
            if quota == nil { return nil }
        }
        var network: NetworkProfile?
        if let networkNode = keyed["network"] {
            network = compileNetwork(networkNode)
            if network == nil { return nil }
        }
        return (Endpoint(method: method, path: path, rules: rules, source: location(endpointNode), quota: quota, network: network),
                endpointNode)
    }

    /// A rule, with its name and each alias and where they are written.
    private mutating func compileRule(_ node: YAMLNode, path: PathPattern, endpoint: String) -> (Rule, [(name: String, node: YAMLNode)])? {
        guard let keyed = mapping(node, allowedKeys: Self.ruleKeys, what: "a rule") else { return nil }
        guard let nameNode = keyed["name"] else {
            error("rule has no 'name:' (names appear in logs and select rules for tests)", at: node)
            return nil
        }
        guard let name = string(nameNode, what: "'name'") else { return nil }
        if name.isEmpty { error("'name' must not be empty", at: nameNode) }

        let aliases = keyed["aliases"].map { compileAliases($0) } ?? []
        let predicates = keyed["when"].map { compileWhen($0, path: path) } ?? [.always]
        var chance: Double?
        var chanceValid = true
        if let chanceNode = keyed["chance"] {
            if let value = chanceNode.scalar.flatMap({ Double($0.string) }), (0...1).contains(value) {
                chance = value
            } else {
                error("'chance' must be a number from 0 to 1 (the fraction of matching requests the rule applies to)", at: chanceNode)
                chanceValid = false
            }
        }

        var effects: [StateEffect] = []
        var effectsValid = true
        if let setNode = keyed["set"] {
            if let compiled = compileEffects(setNode) { effects = compiled } else { effectsValid = false }
        }
        var quota: Quota?
        var quotaValid = true
        if let quotaNode = keyed["quota"] {
            quota = compileQuota(quotaNode, stateKey: Self.stateKey(endpoint: endpoint, rule: node) + "\nquota")
            quotaValid = quota != nil
        }

        var network: NetworkProfile?
        var networkValid = true
        if let networkNode = keyed["network"] {
            network = compileNetwork(networkNode)
            networkValid = network != nil
        }

        let action: Rule.Action?
        switch (keyed["respond"], keyed["cycle"]) {
        case (let respond?, nil):
            action = compileResponse(respond).map(Rule.Action.respond)
        case (nil, let cycle?):
            action = compileCycle(cycle, stateKey: Self.stateKey(endpoint: endpoint, rule: node))
        case (_?, _?):
            error("a rule has either 'respond:' or 'cycle:', not both", at: keyed.key("cycle")!)
            action = nil
        case (nil, nil):
            error("rule '\(shown(name))' has neither 'respond:' nor 'cycle:'", at: node)
            action = nil
        }
        guard let predicates, let action, chanceValid, let aliases, effectsValid, quotaValid, networkValid else { return nil }
        let rule = Rule(name: name, aliases: aliases.map(\.name), when: predicates, action: action, chance: chance,
                        effects: effects, quota: quota, network: network, file: displayPath, line: node.mark.line,
                        column: node.mark.column)
        return (rule, [(name, nameNode)] + aliases)
    }

    /// `aliases:` one name or a list of them: other names `X-Mishap-Rule` accepts for the rule
    /// (a magic input that cannot be a rule name, such as `maintenance!`). Nil after a problem.
    private mutating func compileAliases(_ node: YAMLNode) -> [(name: String, node: YAMLNode)]? {
        let items = node.scalar != nil ? [node] : sequence(node, what: "'aliases' (a name or a list of names)")
        guard let items else { return nil }
        var aliases: [(name: String, node: YAMLNode)] = []
        var valid = true
        for item in items {
            guard let alias = string(item, what: "an alias") else { valid = false; continue }
            if alias.allSatisfy({ $0 == " " || $0 == "\t" }) {
                error("an alias must not be empty", at: item)
                valid = false
                continue
            }
            aliases.append((alias, item))
        }
        return valid ? aliases : nil
    }

    /// What identifies a cycle's state across reloads: its endpoint and its rule's whole
    /// definition, so a rule edited in any way starts its count over.
    static func stateKey(endpoint: String, rule: YAMLNode) -> String {
        var key = endpoint + "\n"
        canonical(rule, into: &key)
        return key
    }

    /// A node's content without its layout (key order, quoting, flow or block style).
    private static func canonical(_ node: YAMLNode, into text: inout String) {
        switch node {
        case .scalar(let scalar):
            text += String(scalar.string.utf8.count)
            text += ":"
            text += scalar.string
        case .mapping(let mapping):
            var pairs: [(String, String)] = []
            for (key, value) in mapping {
                var k = "", v = ""
                canonical(key, into: &k)
                canonical(value, into: &v)
                pairs.append((k, v))
            }
            pairs.sort { $0.0 < $1.0 }
            text += "{"
            for (index, pair) in pairs.enumerated() {
                if index > 0 { text += "," }
                text += pair.0
                text += ":"
                text += pair.1
            }
            text += "}"
        case .sequence(let sequence):
            text += "["
            for (index, item) in sequence.enumerated() {
                if index > 0 { text += "," }
                canonical(item, into: &text)
            }
            text += "]"
        }
    }

    private mutating func compileCycle(_ node: YAMLNode, stateKey: String) -> Rule.Action? {
        guard let items = sequence(node, what: "'cycle'") else { return nil }
        guard !items.isEmpty else {
            error("'cycle' is empty: list the responses in order ('pass' falls through to the next rule)", at: node)
            return nil
        }
        var steps: [Rule.CycleStep] = []
        var valid = true
        for item in items {
            if let scalar = item.scalar {
                if scalar.string == "pass" {
                    steps.append(.pass)
                } else {
                    error("a cycle step is a response or 'pass', not '\(shown(scalar.string))'", at: item)
                    valid = false
                }
            } else if let response = compileResponse(item) {
                steps.append(.respond(response))
            } else {
                valid = false
            }
        }
        guard valid else { return nil }
        let counter = previousCounters[stateKey] ?? CycleCounter()
        cycleCounters[stateKey] = counter
        return .cycle(steps, counter)
    }
}
