/// The rules added at runtime for one session (or for every request), indexed by path: an
/// entry is filed under each literal path of its endpoints, and with those whose paths have
/// parameters. A request then looks at the entries of its own path and the parametered ones,
/// not at every entry kept (1,000 rules of a session on other paths cost it nothing).
struct RuntimeRuleScope: Sendable {
    /// The entries with an endpoint at each literal path, oldest first.
    private var byPath: [String: [RuntimeRules.Entry]] = [:]
    /// The entries with an endpoint whose path has parameters, oldest first.
    private var patterned: [RuntimeRules.Entry] = []
    /// The rules of the scope's entries, for the per-session limit.
    private(set) var rules = 0

    var isEmpty: Bool { byPath.isEmpty && patterned.isEmpty }

    /// Files `entry`, the newest (entries are added in the order of their numbers).
    mutating func insert(_ entry: RuntimeRules.Entry) {
        for path in entry.literalPaths { byPath[path, default: []].append(entry) }
        if entry.hasPatternPaths { patterned.append(entry) }
        rules += entry.ruleCount
    }

    mutating func remove(_ entry: RuntimeRules.Entry) {
        for path in entry.literalPaths {
            byPath[path]?.removeAll { $0 === entry }
            if byPath[path]?.isEmpty == true { byPath[path] = nil }
        }
        if entry.hasPatternPaths { patterned.removeAll { $0 === entry } }
        rules -= entry.ruleCount
    }

    /// Appends to `chosen` the live entries a request to `path` may match, newest first (the
    /// two lists merged by number, an entry in both taken once); sets `dead` when it passed
    /// one that is used up or expired.
    func candidates(path: String, now: Int64, into chosen: inout [RuntimeRules.Entry], dead: inout Bool) {
        let literal = byPath[path] ?? []
        var l = literal.count - 1, p = patterned.count - 1
        while l >= 0 || p >= 0 {
            let entry: RuntimeRules.Entry
            if p < 0 || (l >= 0 && literal[l].number > patterned[p].number) {
                entry = literal[l]
                l -= 1
            } else {
                entry = patterned[p]
                if l >= 0 && literal[l] === entry { l -= 1 }
                p -= 1
            }
            if entry.isLive(now: now) { chosen.append(entry) } else { dead = true }
        }
    }
}
