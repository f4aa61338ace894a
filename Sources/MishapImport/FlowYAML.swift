import MishapRecording
import MishapScenarios

/// A JSON value written as YAML flow text, which reads like JSON: every string and key
/// double-quoted with `YAMLQuoting` (the recorder's quoting, so no value depends on YAML's
/// rules for plain scalars), numbers, booleans and `null` plain. A value that does not fit on
/// one line is spread over lines, each indented deeper than the key it belongs to. A run of
/// equal items in a list is written once with an anchor and then as aliases (`&r1 {...},
/// *r1, *r1`), so a very long list stays a short file.
struct FlowYAML {
    /// The widest line aimed at.
    static let width = 100
    /// A run of at least this many equal items is written with an anchor and aliases.
    static let shortestRun = 4

    private var anchors = 0

    /// The value on one line, if it fits `room` columns, or else on lines indented `indent`.
    mutating func lines(_ value: JSONTree, indent: Int) -> [String] {
        let single = oneLine(value)
        if indent + single.count <= Self.width { return [String(repeating: " ", count: indent) + single] }
        let pad = String(repeating: " ", count: indent)
        switch value {
        case .object(let object):
            var out = [pad + "{"]
            for (offset, member) in object.members.enumerated() {
                let comma = offset == object.members.count - 1 ? "" : ","
                let key = YAMLQuoting.quoted(member.key) + ":"
                var inner = lines(member.value, indent: indent + 4)
                if inner.count == 1 {
                    out.append(pad + "  " + key + " " + inner[0].drop(while: { $0 == " " }) + comma)
                } else {
                    out.append(pad + "  " + key)
                    inner[inner.count - 1] += comma
                    out += inner
                }
            }
            return out + [pad + "}"]
        case .array(let items):
            var out = [pad + "["]
            let groups = runs(items)
            var line = ""
            for (offset, group) in groups.enumerated() {
                let last = offset == groups.count - 1
                var rendered: [String]
                if group.count >= Self.shortestRun {
                    anchors += 1
                    let name = "r\(anchors)"
                    rendered = lines(group.item, indent: indent + 2)
                    rendered[0] = pad + "  &\(name) " + rendered[0].drop(while: { $0 == " " })
                    rendered[rendered.count - 1] += ","
                    if !line.isEmpty { out.append(line); line = "" }
                    out += rendered
                    for index in 1..<group.count {
                        let alias = "*\(name)" + (last && index == group.count - 1 ? "" : ",")
                        if line.isEmpty { line = pad + "  " + alias } else if line.count + alias.count + 1 > Self.width {
                            out.append(line)
                            line = pad + "  " + alias
                        } else {
                            line += " " + alias
                        }
                    }
                    continue
                }
                for index in 0..<group.count {
                    rendered = lines(group.item, indent: indent + 2)
                    if !(last && index == group.count - 1) { rendered[rendered.count - 1] += "," }
                    if !line.isEmpty { out.append(line); line = "" }
                    out += rendered
                }
            }
            if !line.isEmpty { out.append(line) }
            return out + [pad + "]"]
        default:
            return [pad + single]
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
