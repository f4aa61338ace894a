import MishapRecording
import MishapScenarios

/// A JSON value written as YAML flow text, which reads like JSON: every string and key
/// double-quoted with `YAMLQuoting` (the recorder's quoting, so no value depends on YAML's
/// rules for plain scalars), numbers, booleans and `null` plain. A value that does not fit on
/// one line is spread over lines like pretty-printed JSON, each indented deeper than the key it
/// belongs to (as YAML asks of flow content). A run of
/// equal items in a list is written once with an anchor and then as aliases (`&r1 {...},
/// *r1, *r1`), so a very long list stays a short file.
struct FlowYAML {
    /// The widest line aimed at.
    static let width = 100
    /// A run of at least this many equal items is written with an anchor and aliases.
    static let shortestRun = 4

    private var anchors = 0

    /// The value on one line when it fits in `width` columns at `indent`, or else spread over
    /// lines as pretty-printed JSON is: the opening bracket on the first line, members and items
    /// on lines of their own indented two more, the closing bracket at `indent`. Every line is
    /// indented `indent` spaces (the caller puts the first line after a key if it likes).
    mutating func lines(_ value: JSONTree, indent: Int) -> [String] {
        let pad = String(repeating: " ", count: indent)
        var out = tail(value, indent: indent)
        out[0] = pad + out[0]
        return out
    }

    /// The value's lines: the first without indentation (it follows a key or a bracket), the
    /// others indented for `indent`.
    private mutating func tail(_ value: JSONTree, indent: Int) -> [String] {
        let single = oneLine(value)
        if indent + single.count <= Self.width { return [single] }
        let pad = String(repeating: " ", count: indent)
        let inner = pad + "  "
        switch value {
        case .object(let object):
            var out = ["{"]
            for (offset, member) in object.members.enumerated() {
                var rendered = tail(member.value, indent: indent + 2)
                rendered[0] = inner + YAMLQuoting.quoted(member.key) + ": " + rendered[0]
                if offset < object.members.count - 1 { rendered[rendered.count - 1] += "," }
                out += rendered
            }
            return out + [pad + "}"]
        case .array(let items):
            var out = ["["]
            let groups = runs(items)
            var line = ""
            for (offset, group) in groups.enumerated() {
                let last = offset == groups.count - 1
                var rendered: [String]
                if group.count >= Self.shortestRun {
                    anchors += 1
                    let name = "r\(anchors)"
                    rendered = tail(group.item, indent: indent + 2)
                    rendered[0] = inner + "&\(name) " + rendered[0]
                    rendered[rendered.count - 1] += ","
                    if !line.isEmpty { out.append(line); line = "" }
                    out += rendered
                    for index in 1..<group.count {
                        let alias = "*\(name)" + (last && index == group.count - 1 ? "" : ",")
                        if line.isEmpty {
                            line = inner + alias
                        } else if line.count + alias.count + 1 > Self.width {
                            out.append(line)
                            line = inner + alias
                        } else {
                            line += " " + alias
                        }
                    }
                    continue
                }
                for index in 0..<group.count {
                    rendered = tail(group.item, indent: indent + 2)
                    rendered[0] = inner + rendered[0]
                    if !(last && index == group.count - 1) { rendered[rendered.count - 1] += "," }
                    if !line.isEmpty { out.append(line); line = "" }
                    out += rendered
                }
            }
            if !line.isEmpty { out.append(line) }
            return out + [pad + "]"]
        default:
            return [single]
        }
    }

    /// The value as one line of flow YAML.
    func oneLine(_ value: JSONTree) -> String {
        switch value {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .number(let text): return text
        case .string(let text): return YAMLQuoting.quoted(text)
        case .array(let items): return items.isEmpty ? "[]" : "[" + items.map(oneLine).joined(separator: ", ") + "]"
        case .object(let object):
            return object.isEmpty ? "{}" : "{ " + object.members.map { YAMLQuoting.quoted($0.key) + ": " + oneLine($0.value) }.joined(separator: ", ") + " }"
        }
    }

    /// The items grouped into runs of equal neighbours.
    private func runs(_ items: [JSONTree]) -> [(item: JSONTree, count: Int)] {
        var groups: [(item: JSONTree, count: Int)] = []
        for item in items {
            if let last = groups.last, last.item == item { groups[groups.count - 1].count += 1 } else { groups.append((item, 1)) }
        }
        return groups
    }
}
