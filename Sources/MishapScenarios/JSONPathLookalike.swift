/// A `when.body` field name written the way JSONPath or jq name fields (`$.items[0].qty`,
/// `items[?(@.qty>1)]`, `.user.email`). Mishap reads a body field's name literally, splitting it
/// at dots only, so such a name is looked for as a key of that very spelling and the test can
/// never hold: the loader warns at the field.
///
/// What counts, precisely (a name that is one of these, or holds one):
/// - a filter: `[?` or `?(`;
/// - the root `$` alone or followed by `.` or `[` at the start;
/// - the current item `@` alone or followed by `.` or `[`, at the start or anywhere;
/// - a wildcard: `[*]`, or a segment between dots that is `*`;
/// - recursive descent: `..`;
/// - a leading `.` (jq's `.user.email`);
/// - a quoted name in brackets: `['` or `["`.
///
/// A bracketed name or index alone (`user[email]`, `items[0]`, `items[]`) is not one: forms
/// post fields of those names (Rails, PHP), and Mishap matches a form field by its whole name.
enum JSONPathLookalike {
    /// What of JSONPath the name holds (for the warning), or nil for a name that holds none.
    /// Read over the name's bytes once: it runs for every body field at every load, and
    /// `String.contains` with a string argument costs thousands of instructions a call.
    static func feature(of name: String) -> String? {
        let bytes = Array(name.utf8)
        func at(_ index: Int) -> UInt8 { index >= 0 && index < bytes.count ? bytes[index] : 0 }
        let (dot, open, question, atSign, star) = (UInt8(ascii: "."), UInt8(ascii: "["), UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "*"))
        var filter = false, current = false, wildcard = false, descent = false, quoted = false
        for index in bytes.indices {
            let byte = bytes[index], next = at(index + 1)
            switch byte {
            case open:
                if next == question { filter = true }
                if next == star && at(index + 2) == UInt8(ascii: "]") { wildcard = true }
                if next == UInt8(ascii: "'") || next == UInt8(ascii: "\"") { quoted = true }
            case question where next == UInt8(ascii: "("): filter = true
            case atSign where next == dot || next == open || (index == 0 && next == 0): current = true
            case star where (index == 0 || at(index - 1) == dot) && (next == 0 || next == dot): wildcard = true
            case dot where next == dot: descent = true
            default: break
            }
        }
        if filter { return "a filter '[?'" }
        if bytes.first == UInt8(ascii: "$") && (bytes.count == 1 || at(1) == dot || at(1) == open) { return "the root '$'" }
        if current { return "the current item '@'" }
        if wildcard { return "a wildcard '*'" }
        if descent { return "recursive descent '..'" }
        if bytes.first == dot { return "a leading '.' (jq)" }
        if quoted { return "a quoted name in brackets" }
        return nil
    }

    /// The same field named the way Mishap names it (`$.items[0].qty` is `items.0.qty`), when
    /// there is such a name: none for filters, wildcards and recursive descent.
    static func dotted(_ name: String) -> String? {
        guard !name.contains("..") else { return nil }
        var rest = Substring(name)
        if rest.hasPrefix("$") { rest = rest.dropFirst() }
        var out = ""
        while let first = rest.first {
            guard first == "[" else {
                out.append(first)
                rest = rest.dropFirst()
                continue
            }
            guard let close = rest.firstIndex(of: "]") else { return nil }
            var inside = rest[rest.index(after: rest.startIndex)..<close]
            if let quote = inside.first, quote == "'" || quote == "\"", inside.count >= 2, inside.last == quote {
                inside = inside.dropFirst().dropLast()
            } else if inside.isEmpty || !inside.allSatisfy(\.isASCII) || !inside.allSatisfy(\.isNumber) {
                return nil
            }
            out += "." + inside
            rest = rest[rest.index(after: close)...]
        }
        if out.hasPrefix(".") { out.removeFirst() }
        let invalid = out.isEmpty || out.hasPrefix(".") || out.contains("..") || out.hasSuffix(".")
            || out.contains(where: { "[]*?@$".contains($0) })
        return invalid ? nil : out
    }

    /// The warning's text for a field `name` that holds `feature`.
    static func message(_ name: String, feature: String) -> String {
        let advice = dotted(name).map { "write '\($0)': nested fields are named with dots (items.0.qty is the qty of the first item)" }
            ?? "nested fields are named with dots (items.0.qty is the qty of the first item); filters and wildcards have no "
            + "equivalent: test fixed indices instead, one 'when' alternative each"
        return "warning: body field '\(name)' looks like JSONPath (\(feature)), but 'when' takes a field's name literally, "
            + "so this test can never hold; \(advice)"
    }
}
