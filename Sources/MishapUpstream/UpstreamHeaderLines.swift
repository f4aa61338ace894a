/// The header lines of an upstream's answer, as libcurl hands them over one by one, made into
/// fields that HTTP/1.1 allows (RFC 9112 section 5), and what had to be done to them said in
/// words. libcurl itself refuses a line without a colon and a NUL byte (the call fails, and is
/// answered 502 saying why); what it lets through is:
///
/// - a header folded over several lines (obs-fold, a line starting with a space or a tab): the
///   lines are joined with one space, as RFC 9112 section 5.2 tells a proxy to;
/// - whitespace between a name and its colon: removed (section 5.1);
/// - a name with characters a name cannot have: the line is left out;
/// - a control character in a value (a bare CR, which some clients take for a line end): made a
///   space (section 2.2).
struct UpstreamHeaderLines {
    /// The fields so far, in order.
    private(set) var fields: [(name: String, value: String)] = []
    /// What was done to them, one sentence each, each said once.
    private(set) var repairs: [String] = []

    /// Takes one line as libcurl gives it (its CR LF included): a status line starts over (an
    /// interim `100 Continue` or `103 Early Hints` comes before the final answer's head).
    mutating func take(_ bytes: UnsafeBufferPointer<UInt8>) {
        var line = Array(bytes)
        if line.last == UInt8(ascii: "\n") { line.removeLast() }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if line.starts(with: "HTTP/".utf8) {
            fields = []
            repairs = []
            return
        }
        guard let first = line.first else { return }
        if first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            unfold(line)
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        var name = line[..<colon]
        while let last = name.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { name = name.dropLast() }
        let nameText = String(decoding: name, as: UTF8.self)
        guard !name.isEmpty, name.allSatisfy(Self.isTokenByte) else {
            note("a header line whose name is not a header name ('\(Self.shown(line))') was left out")
            return
        }
        if name.count != colon { note("the space before the colon of the header \(nameText) was removed") }
        fields.append((nameText, value(line[(colon + 1)...], of: nameText)))
    }

    /// A continuation line (obs-fold): joined to the field before it with one space.
    private mutating func unfold(_ line: [UInt8]) {
        guard let last = fields.indices.last else {
            note("a continued header line with no header before it was left out")
            return
        }
        let name = fields[last].name
        let more = value(line[...], of: name)
        fields[last].value = fields[last].value.isEmpty ? more : more.isEmpty ? fields[last].value : fields[last].value + " " + more
        note("the header \(name) was folded over several lines (obs-fold); its lines were joined with a space")
    }

    /// A value without the whitespace around it, each control character but tab made a space.
    private mutating func value(_ bytes: ArraySlice<UInt8>, of name: String) -> String {
        var value = Array(bytes)
        var replaced = false
        for index in value.indices where (value[index] < 0x20 && value[index] != 0x09) || value[index] == 0x7F {
            value[index] = UInt8(ascii: " ")
            replaced = true
        }
        if replaced { note("a control character (a bare CR) in the header \(name) was made a space") }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        let start = value.firstIndex { !isSpace($0) } ?? value.endIndex
        let end = value.lastIndex { !isSpace($0) }.map { $0 + 1 } ?? start
        return String(decoding: value[start..<max(start, end)], as: UTF8.self)
    }

    private mutating func note(_ repair: String) {
        if !repairs.contains(repair) { repairs.append(repair) }
    }

    /// A line shown in a note: printable ASCII, the rest as `?`, at most 60 bytes.
    private static func shown(_ line: [UInt8]) -> String {
        String(decoding: line.prefix(60).map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    /// The bytes of a header name (a token, RFC 9110 section 5.6.2).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
