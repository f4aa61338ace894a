import Foundation

/// One HTTP/1.x response exactly as read from the wire.
struct WireResponse {
    var version: String
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The first value of a header, its name compared without regard to case.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Whether any header has this name.
    func has(_ name: String) -> Bool { header(name) != nil }

    /// 1xx: an interim response, before the final one.
    var isInterim: Bool { (100...199).contains(status) }

    /// The server said it closes the connection after this response.
    var announcesClose: Bool {
        let connection = headers.filter { $0.name.caseInsensitiveCompare("Connection") == .orderedSame }
            .flatMap { $0.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        if connection.contains("close") { return true }
        return version == "HTTP/1.0" && !connection.contains("keep-alive")
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A strict reader of a stream of HTTP/1.x responses (RFC 9112): a status line, header fields
/// whose names are tokens and whose values hold no control characters but HTAB, every line
/// ended by CRLF, and a body framed by `Content-Length`, by chunked coding, or by the end of
/// the stream. Anything else is reported as malformed.
enum WireReader {
    struct Stream {
        /// Every response complete on the wire, interim ones included.
        var responses: [WireResponse] = []
        /// Bytes after the last complete response that do not (yet) form one.
        var leftover: [UInt8] = []
        /// Why the bytes are not HTTP, when they are not.
        var problem: String?

        /// Final (non-1xx) responses.
        var finalCount: Int { responses.count(where: { !$0.isInterim }) }
    }

    private enum Step {
        case complete(WireResponse, consumed: Int)
        case incomplete
        case malformed(String)
    }

    /// Reads `bytes` as consecutive responses. `isHead(n)` says whether the n-th final response
    /// answers a HEAD request (no body follows its head); `atEnd` whether the server has closed,
    /// which ends a body without framing.
    static func read(_ bytes: [UInt8], atEnd: Bool, isHead: (Int) -> Bool = { _ in false }) -> Stream {
        var stream = Stream()
        var offset = 0
        while offset < bytes.count {
            let step = readOne(bytes[offset...], atEnd: atEnd, isHead: isHead(stream.finalCount))
            switch step {
            case .complete(let response, let consumed):
                stream.responses.append(response)
                offset += consumed
                if !response.isInterim && response.announcesClose && offset < bytes.count {
                    stream.problem = "\(bytes.count - offset) bytes after a response that announced the connection closes"
                    stream.leftover = Array(bytes[offset...])
                    return stream
                }
            case .incomplete:
                stream.leftover = Array(bytes[offset...])
                return stream
            case .malformed(let why):
                stream.problem = why
                stream.leftover = Array(bytes[offset...])
                return stream
            }
        }
        return stream
    }

    private static let crlf: [UInt8] = [0x0D, 0x0A]

    /// The largest head accepted before the bytes are declared not HTTP.
    static let maxHeadBytes = 64 << 10

    private static func readOne(_ bytes: ArraySlice<UInt8>, atEnd: Bool, isHead: Bool) -> Step {
        let start = bytes.startIndex
        // A response must begin like one; garbage is reported at once, not waited on.
        let prefix = Array("HTTP/1.".utf8)
        let known = min(prefix.count, bytes.count)
        guard bytes.prefix(known).elementsEqual(prefix.prefix(known)) else {
            return .malformed("does not start with a status line: \(printable(bytes.prefix(40)))")
        }
        var lines: [ArraySlice<UInt8>] = []
        var cursor = start
        while true {
            guard let lineEnd = find(crlf, in: bytes, from: cursor) else {
                if let stray = bytes[cursor...].firstIndex(where: { $0 == 0x0A || $0 == 0x00 }) {
                    return .malformed("bare LF or NUL in the head: \(printable(bytes[cursor..<min(stray + 20, bytes.endIndex)]))")
                }
                if bytes.count > maxHeadBytes { return .malformed("a head longer than \(maxHeadBytes) bytes") }
                return .incomplete
            }
            let line = bytes[cursor..<lineEnd]
            cursor = lineEnd + 2
            if line.isEmpty { break }
            lines.append(line)
        }
        guard let statusLine = lines.first else { return .malformed("an empty line where a status line belongs") }
        guard let (version, status, reason) = parseStatusLine(statusLine) else {
            return .malformed("bad status line: \(printable(statusLine))")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let header = parseHeader(line) else { return .malformed("bad header line: \(printable(line))") }
            headers.append(header)
        }
        var response = WireResponse(version: version, status: status, reason: reason, headers: headers, body: [])

        let lengths = headers.filter { $0.name.caseInsensitiveCompare("Content-Length") == .orderedSame }.map(\.value)
        let codings = headers.filter { $0.name.caseInsensitiveCompare("Transfer-Encoding") == .orderedSame }
            .flatMap { $0.value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } }
        if !lengths.isEmpty && !codings.isEmpty { return .malformed("both Content-Length and Transfer-Encoding") }
        var length: Int?
        for value in lengths {
            guard !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), value.count < 12, let parsed = Int(value) else {
                return .malformed("bad Content-Length '\(value)'")
            }
            if let length, length != parsed { return .malformed("differing Content-Length values \(lengths)") }
            length = parsed
        }

        let headEnd = cursor
        if response.isInterim || status == 204 || status == 304 || isHead {
            if response.isInterim && (!lengths.isEmpty || !codings.isEmpty) { return .malformed("an interim response with a body") }
            return .complete(response, consumed: headEnd - start)
        }
        if !codings.isEmpty {
            guard codings.last == "chunked" else { return .malformed("Transfer-Encoding \(codings) does not end in chunked") }
            switch readChunked(bytes, from: headEnd) {
            case .success(let (body, end))?:
                response.body = body
                return .complete(response, consumed: end - start)
            case .failure(let problem)?:
                return .malformed(problem.description)
            case nil:
                return .incomplete
            }
        }
        if let length {
            guard bytes.endIndex - headEnd >= length else { return .incomplete }
            response.body = Array(bytes[headEnd..<headEnd + length])
            return .complete(response, consumed: headEnd + length - start)
        }
        // No framing: the body runs to the end of the stream.
        guard atEnd else { return .incomplete }
        response.body = Array(bytes[headEnd...])
        return .complete(response, consumed: bytes.endIndex - start)
    }

    private static func parseStatusLine(_ line: ArraySlice<UInt8>) -> (String, Int, String)? {
        let bytes = Array(line)
        guard bytes.count >= 13 else { return nil }
        let version = String(decoding: bytes[0..<8], as: UTF8.self)
        guard version == "HTTP/1.1" || version == "HTTP/1.0", bytes[8] == 0x20, bytes[12] == 0x20 else { return nil }
        guard bytes[9...11].allSatisfy({ (0x30...0x39).contains($0) }), let status = Int(String(decoding: bytes[9...11], as: UTF8.self)),
              (100...599).contains(status) else { return nil }
        let reason = bytes[13...]
        guard reason.allSatisfy(isFieldByte) else { return nil }
        return (version, status, String(decoding: reason, as: UTF8.self))
    }

    /// `name: value` with a token name and a value of visible characters, spaces, tabs and
    /// obs-text (RFC 9110 5.5), no control character but HTAB, and no line folding.
    private static func parseHeader(_ line: ArraySlice<UInt8>) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return nil }
        let value = line[(colon + 1)...]
        guard value.allSatisfy(isFieldByte) else { return nil }
        let trimmed = String(decoding: value, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        return (String(decoding: name, as: UTF8.self), trimmed)
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    static func isFieldByte(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x7E).contains(byte) || byte >= 0x80
    }

    private struct ChunkProblem: Error, CustomStringConvertible { let description: String }

    /// A chunked body from `offset`: the body and where it ends, a problem, or nil when more
    /// bytes are needed.
    private static func readChunked(_ bytes: ArraySlice<UInt8>, from offset: Int) -> Result<([UInt8], Int), ChunkProblem>? {
        var body: [UInt8] = []
        var cursor = offset
        while true {
            guard let lineEnd = find(crlf, in: bytes, from: cursor) else {
                return bytes.endIndex - cursor > 1024 ? .failure(ChunkProblem(description: "chunk size line too long")) : nil
            }
            let line = bytes[cursor..<lineEnd]
            let sizeText = line.prefix { $0 != UInt8(ascii: ";") }
            guard !sizeText.isEmpty, sizeText.count <= 15,
                  let size = Int(String(decoding: sizeText, as: UTF8.self), radix: 16), size >= 0 else {
                return .failure(ChunkProblem(description: "bad chunk size line: \(printable(line))"))
            }
            cursor = lineEnd + 2
            if size == 0 {
                // Trailer fields, then an empty line.
                while true {
                    guard let end = find(crlf, in: bytes, from: cursor) else { return nil }
                    let trailer = bytes[cursor..<end]
                    cursor = end + 2
                    if trailer.isEmpty { return .success((body, cursor)) }
                    if parseHeader(trailer) == nil {
                        return .failure(ChunkProblem(description: "bad trailer line: \(printable(trailer))"))
                    }
                }
            }
            guard bytes.endIndex - cursor >= size + 2 else { return nil }
            body += bytes[cursor..<cursor + size]
            cursor += size
            guard bytes[cursor] == 0x0D, bytes[cursor + 1] == 0x0A else {
                return .failure(ChunkProblem(description: "chunk data not followed by CRLF"))
            }
            cursor += 2
        }
    }

    private static func find(_ needle: [UInt8], in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        guard bytes.endIndex - start >= needle.count else { return nil }
        var index = start
        while index <= bytes.endIndex - needle.count {
            if bytes[index] == needle[0] && bytes[index + 1] == needle[1] { return index }
            index += 1
        }
        return nil
    }
}

/// Bytes for a failure message: printable ASCII as is, the rest as `\xNN`, cut to `limit`.
func printable<C: Collection>(_ bytes: C, limit: Int = 240) -> String where C.Element == UInt8 {
    var text = ""
    for byte in bytes.prefix(limit) {
        switch byte {
        case 0x0D: text += "\\r"
        case 0x0A: text += "\\n"
        case 0x5C: text += "\\\\"
        case 0x20...0x7E: text.append(Character(Unicode.Scalar(byte)))
        default: text += String(format: "\\x%02X", byte)
        }
    }
    return bytes.count > limit ? text + "… (\(bytes.count) bytes)" : text
}

/// A JSON object from a response body, if it is one.
func jsonObject(_ response: WireResponse) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])) as? [String: Any]
}
