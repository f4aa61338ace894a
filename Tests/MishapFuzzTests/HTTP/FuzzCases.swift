import Foundation
import MishapTestSupport

/// What one final response must be, when the request is known to be valid.
struct ExpectedResponse {
    var statuses: Set<Int>
    var method = "GET"
    /// A problem with the response, or nil.
    var check: (WireResponse) -> String? = { _ in nil }
}

/// One fuzz case: bytes to send on a new connection, in pieces, and how to end.
struct FuzzCase {
    enum Ending {
        /// Read until the expected responses arrive (or the server closes).
        case awaitResponses
        /// Half-close (SHUT_WR) once the server has gone quiet, then read until it closes.
        case halfClose
        /// Read for a moment without closing (the server may close by itself), then half-close.
        case readThenHalfClose(milliseconds: Int)
        /// Reset the connection right after sending (SO_LINGER 0); nothing is read.
        case abort
    }

    var kind: String
    var pieces: [[UInt8]]
    /// Pause between pieces.
    var pauseMicroseconds = 0
    var ending: Ending
    /// The responses, in order, when every request is valid; nil when the outcome is open.
    var expected: [ExpectedResponse]?

    var bytes: [UInt8] { pieces.flatMap { $0 } }
}

/// The generators. Each case is drawn from its own `SeededRandom`, so it can be rebuilt alone.
enum FuzzCases {
    static func make(_ random: inout SeededRandom) -> FuzzCase {
        let kind = random.weighted([
            (13, "echo"), (9, "submit"), (5, "item"), (3, "static"), (3, "admin"), (2, "http10"),
            (8, "pipelined"), (3, "headersOverLimit"), (3, "bodyOverLimit"),
            (10, "requestLine"), (8, "headerJunk"), (6, "contentLength"), (7, "chunked"), (5, "encoding"),
            (15, "mutation"), (3, "abort"),
        ])
        switch kind {
        case "echo", "submit", "item", "static", "admin", "http10":
            let (bytes, expected) = valid(kind, &random)
            return known(kind, bytes, [expected], &random)
        case "pipelined":
            var bytes: [UInt8] = []
            var expected: [ExpectedResponse] = []
            for _ in 0..<random.int(2...10) {
                let (one, expectation) = valid(random.pick(["echo", "echo", "submit", "item", "static", "head"]), &random, small: true)
                bytes += one
                expected.append(expectation)
            }
            var fuzzCase = known(kind, bytes, expected, &random)
            fuzzCase.pieces = split(bytes, into: random.int(1...8), &random)
            return fuzzCase
        case "headersOverLimit": return headersOverLimit(&random)
        case "bodyOverLimit": return bodyOverLimit(&random)
        case "requestLine": return looselyChecked(kind, requestLine(&random), &random)
        case "headerJunk": return looselyChecked(kind, headerJunk(&random), &random)
        case "contentLength": return looselyChecked(kind, contentLength(&random), &random)
        case "chunked": return looselyChecked(kind, chunked(&random), &random)
        case "encoding": return looselyChecked(kind, encoding(&random), &random)
        case "mutation":
            let base = valid(random.pick(["echo", "submit", "item", "static", "admin"]), &random, small: true).0
            let followed = random.chance(0.3) ? base + valid("echo", &random, small: true).0 : base
            return looselyChecked(kind, mutate(followed, &random), &random)
        default: return abort(&random)
        }
    }

    /// A case whose responses are known; mostly read to the end, sometimes half-closed early.
    private static func known(_ kind: String, _ bytes: [UInt8], _ expected: [ExpectedResponse], _ random: inout SeededRandom) -> FuzzCase {
        var fuzzCase = FuzzCase(kind: kind, pieces: [bytes], ending: random.chance(0.2) ? .halfClose : .awaitResponses, expected: expected)
        if random.chance(0.25) {
            fuzzCase.pieces = split(bytes, into: random.int(2...6), &random)
            fuzzCase.pauseMicroseconds = random.int(0...300)
        }
        return fuzzCase
    }

    /// A case whose outcome is open: only well-formedness and the general rules are checked.
    private static func looselyChecked(_ kind: String, _ bytes: [UInt8], _ random: inout SeededRandom) -> FuzzCase {
        var fuzzCase = FuzzCase(kind: kind, pieces: [bytes], ending: .halfClose)
        if random.chance(0.3) {
            fuzzCase.pieces = split(bytes, into: random.int(2...6), &random)
            fuzzCase.pauseMicroseconds = random.int(0...300)
        }
        if random.chance(0.05) { fuzzCase.ending = .readThenHalfClose(milliseconds: 150) }
        return fuzzCase
    }

    /// `bytes` cut at random places into about `count` pieces.
    static func split(_ bytes: [UInt8], into count: Int, _ random: inout SeededRandom) -> [[UInt8]] {
        guard count > 1, bytes.count > 1 else { return [bytes] }
        let cuts = Set((1..<count).map { _ in random.int(1...bytes.count - 1) }).sorted()
        var pieces: [[UInt8]] = []
        var start = 0
        for cut in cuts {
            pieces.append(Array(bytes[start..<cut]))
            start = cut
        }
        pieces.append(Array(bytes[start...]))
        return pieces
    }

    // MARK: Building blocks

    static func request(_ method: String, _ target: [UInt8], version: String = "HTTP/1.1", host: Bool = true,
                        headers: [[UInt8]] = [], body: [UInt8]? = nil) -> [UInt8] {
        var bytes = Array(method.utf8) + [0x20] + target + [0x20] + Array(version.utf8) + crlf
        if host { bytes += Array("Host: 127.0.0.1".utf8) + crlf }
        for header in headers { bytes += header + crlf }
        if let body { bytes += Array("Content-Length: \(body.count)".utf8) + crlf }
        return bytes + crlf + (body ?? [])
    }

    static let crlf: [UInt8] = [0x0D, 0x0A]

    /// Pieces of request values that tend to break things: quotes, backslashes, control
    /// characters, CRLF with a header after it, template syntax, percent signs, non-ASCII text
    /// and invalid UTF-8 (a lone continuation byte, overlong forms, a surrogate, beyond U+10FFFF).
    static let fragments: [[UInt8]] = [
        "\"", "\\", "\\\"", "\\u0000", "'", "</script>", "{{query.name}}", "{{", "}}", "%", "%G1", "%00", "%C3%28",
        "&", "=", "+", "#", "?", "/", ";", ",", " ", "\t", "\r\n", "\r\nX-Injected: yes", "\nX-Injected: yes",
        "\rX-Injected: yes", "\r\n\r\nX-Injected: yes", "é", "👨‍👩‍👧", "\u{2028}", "\u{FEFF}", "\u{10FFFF}", "日本",
    ].map { Array($0.utf8) } + [
        [0x00], [0x01], [0x08], [0x0B], [0x0C], [0x1B], [0x1F], [0x7F],
        [0xC3, 0x28], [0xFF], [0xFE], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0x80], [0xE2, 0x82],
        [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
    ]

    static func word(_ random: inout SeededRandom, _ length: ClosedRange<Int> = 1...8) -> [UInt8] {
        (0..<random.int(length)).map { _ in random.pick(Array("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789".utf8)) }
    }

    /// A request value: words and hostile fragments, sometimes empty.
    static func nasty(_ random: inout SeededRandom) -> [UInt8] {
        if random.chance(0.05) { return [] }
        var bytes: [UInt8] = []
        for _ in 0..<random.int(1...6) {
            bytes += random.chance(0.6) ? random.pick(fragments) : word(&random)
        }
        return bytes
    }

    /// Percent-encoding of every byte but the unreserved ones, in either hex case.
    static func encoded(_ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        let digits = random.chance(0.5) ? Array("0123456789ABCDEF".utf8) : Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
        }
        return out
    }

    /// A header value the server keeps as sent: visible ASCII, non-ASCII bytes (valid or not)
    /// and inner spaces or tabs; CRLF spelled out as text.
    static func headerValue(_ random: inout SeededRandom) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<random.int(1...5) {
            let letters = word(&random)
            bytes += random.weighted([
                (4, letters), (1, Array("a%0d%0aX-Injected:%20yes".utf8)), (1, Array("\"\\\"".utf8)),
                (1, Array("é👨‍👩‍👧".utf8)), (1, [0xFF, 0xC3, 0x28]), (1, [0x20]), (1, [0x09]), (1, Array("{{headers.X-Thing}}".utf8)),
            ])
        }
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        return bytes.isEmpty ? Array("v".utf8) : bytes
    }

    /// How a request value comes back in a response header: control characters but HTAB
    /// removed, spaces and tabs at either end trimmed (as the reader trims them).
    static func headerForm(_ text: String) -> String {
        let kept = text.utf8.filter { ($0 >= 0x20 && $0 != 0x7F) || $0 == 0x09 }
        return String(decoding: kept, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }

    /// Whether a string read back from JSON is `expected`. swift-corelibs-foundation's
    /// JSONSerialization drops U+FEFF from strings (the bytes on the wire keep it), so it is
    /// left out of the comparison.
    static func same(_ value: Any?, _ expected: String) -> Bool {
        guard let value = value as? String else { return false }
        return value.replacing("\u{FEFF}", with: "") == expected.replacing("\u{FEFF}", with: "")
    }

    /// A problem when `response` does not echo `text` in header `name`. libmicrohttpd leaves
    /// out a header whose value is empty, so absent equals empty.
    static func echoProblem(_ response: WireResponse, _ name: String, _ text: String) -> String? {
        let expected = headerForm(text)
        let actual = response.header(name) ?? ""
        return actual == expected ? nil : "\(name) \(actual.debugDescription) is not \(expected.debugDescription)"
    }

    // MARK: Valid requests

    /// A valid request of `kind` and what it must be answered.
    static func valid(_ kind: String, _ random: inout SeededRandom, small: Bool = false) -> ([UInt8], ExpectedResponse) {
        switch kind {
        case "echo", "head": return echo(&random, head: kind == "head")
        case "submit": return submit(&random, small: small)
        case "item": return item(&random)
        case "static": return staticText(&random)
        case "admin": return admin(&random)
        default: return http10(&random)
        }
    }

    private static func echo(_ random: inout SeededRandom, head: Bool) -> ([UInt8], ExpectedResponse) {
        let value = nasty(&random)
        let name = String(decoding: value, as: UTF8.self)
        let mode = random.weighted([(8, ""), (1, "cycle"), (1, "slow")])
        var target = Array("/echo?".utf8)
        var parameters = [Array("name=".utf8) + encoded(value, &random)]
        if !mode.isEmpty { parameters.append(Array("mode=\(mode)".utf8)) }
        if random.chance(0.2) { parameters.append(Array("other=%G1%zz%".utf8)) }
        if random.chance(0.2) { parameters.append(Array("flag".utf8)) }
        if random.chance(0.3) { parameters.shuffle(using: &random) }
        target += Array(parameters.joined(separator: [UInt8(ascii: "&")]))
        var headers: [[UInt8]] = []
        var thing = ""
        if random.chance(0.6) {
            let value = headerValue(&random)
            thing = String(decoding: value, as: UTF8.self)
            headers.append(Array(random.pick(["X-Thing", "x-thing", "X-THING"]).utf8) + Array(": ".utf8) + value)
        }
        if random.chance(0.3) { headers.append(Array("Accept: application/json".utf8)) }
        if random.chance(0.1) { headers.append(Array("Connection: keep-alive".utf8)) }
        if random.chance(0.1) { headers.append(Array("Expect: 100-continue".utf8)) }
        headers.shuffle(using: &random)
        let method = head ? "HEAD" : "GET"
        let expected = ExpectedResponse(statuses: mode == "cycle" ? [503, 200] : [200], method: method) { response in
            if head {
                return response.body.isEmpty && response.has("Content-Length") ? nil : "HEAD answered with a body or without a length"
            }
            guard let json = jsonObject(response) else { return "not a JSON object: \(printable(response.body))" }
            if !same(json["name"], name) { return "name \(String(describing: json["name"])) is not \(name.debugDescription)" }
            if let problem = echoProblem(response, "X-Echo", name) { return problem }
            if response.status == 503 { return json["step"] as? Int == 1 ? nil : "not the cycle's step" }
            if mode == "slow" { return json["slow"] as? Bool == true ? nil : "not the slow rule" }
            if !same(json["thing"], thing) { return "thing \(String(describing: json["thing"])) is not \(thing.debugDescription)" }
            if let problem = echoProblem(response, "X-Thing-Echo", thing) { return problem }
            if json["method"] as? String != "GET" || json["path"] as? String != "/echo" { return "wrong method or path" }
            return nil
        }
        return (request(method, target, headers: headers), expected)
    }

    private static func submit(_ random: inout SeededRandom, small: Bool) -> ([UInt8], ExpectedResponse) {
        let field = String(decoding: nasty(&random), as: UTF8.self)
        let nested = String(decoding: nasty(&random), as: UTF8.self)
        let kind = random.pick(["vip", "vip", "other", ""])
        let form = random.chance(0.3)
        var body: [UInt8]
        var headers: [[UInt8]] = []
        if form {
            body = Array("kind=\(kind)&field=".utf8) + encoded(Array(field.utf8), &random)
            headers.append(Array(random.pick(["Content-Type: application/x-www-form-urlencoded",
                                              "Content-Type: Application/X-WWW-Form-URLEncoded; charset=utf-8"]).utf8))
        } else {
            var object: [String: Any] = ["kind": kind, "field": field]
            if random.chance(0.7) { object["user"] = ["name": nested] }
            body = try! Array(JSONSerialization.data(withJSONObject: object))
            headers.append(Array("Content-Type: application/json".utf8))
            if !small && random.chance(0.1) { body += [UInt8](repeating: 0x20, count: random.int(1000...20000)) }
        }
        if random.chance(0.15) { headers.append(Array("Expect: 100-continue".utf8)) }
        var bytes: [UInt8]
        if random.chance(0.3) {
            headers.append(Array("Transfer-Encoding: chunked".utf8))
            bytes = request("POST", Array("/submit".utf8), headers: headers) + chunkedBody(body, &random)
        } else {
            bytes = request("POST", Array("/submit".utf8), headers: headers, body: body)
        }
        let vip = kind == "vip" && !field.isEmpty
        let expectNested = !form
        let expected = ExpectedResponse(statuses: [vip ? 201 : 202], method: "POST") { response in
            guard let json = jsonObject(response) else { return "not a JSON object: \(printable(response.body))" }
            if !same(json["field"], field) { return "field \(String(describing: json["field"])) is not \(field.debugDescription)" }
            if let problem = echoProblem(response, "X-Field", field) { return problem }
            if !vip && expectNested, let echoed = json["nested"] as? String, !same(echoed, nested) && !echoed.isEmpty {
                return "nested \(echoed.debugDescription) is not \(nested.debugDescription)"
            }
            return nil
        }
        return (bytes, expected)
    }

    /// `body` in chunks of random sizes, with extensions and trailers now and then.
    static func chunkedBody(_ body: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        var offset = 0
        while offset < body.count {
            let size = min(body.count - offset, random.int(1...max(1, body.count / 2 + 1)))
            out += Array(String(size, radix: 16, uppercase: random.chance(0.5)).utf8)
            if random.chance(0.1) { out += Array(";ext=\"v\"".utf8) }
            out += crlf + body[offset..<offset + size] + crlf
            offset += size
        }
        out += Array("0".utf8) + crlf
        if random.chance(0.2) { out += Array("X-Trailer: t".utf8) + crlf }
        return out + crlf
    }

    private static func item(_ random: inout SeededRandom) -> ([UInt8], ExpectedResponse) {
        var id = nasty(&random).filter { $0 != UInt8(ascii: "/") && $0 != 0 }
        if id.isEmpty { id = word(&random) }
        let text = String(decoding: id, as: UTF8.self)
        let method = random.pick(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
        let body: [UInt8]? = method == "GET" ? nil : random.pick([nil, [], Array("x".utf8)])
        let expected = ExpectedResponse(statuses: [200], method: method) { response in
            guard let json = jsonObject(response) else { return "not a JSON object: \(printable(response.body))" }
            if !same(json["id"], text) { return "id \(String(describing: json["id"])) is not \(text.debugDescription)" }
            if json["method"] as? String != method { return "method \(String(describing: json["method"])) is not \(method)" }
            if let problem = echoProblem(response, "X-Id", text) { return problem }
            return nil
        }
        return (request(method, Array("/items/".utf8) + encoded(id, &random), body: body), expected)
    }

    private static func staticText(_ random: inout SeededRandom) -> ([UInt8], ExpectedResponse) {
        let value = nasty(&random)
        let target = Array("/static/".utf8) + word(&random) + Array("/x.txt?name=".utf8) + encoded(value, &random)
        let expected = ExpectedResponse(statuses: [200]) { response in
            let body = Array("plain ".utf8) + Array(String(decoding: value, as: UTF8.self).utf8)
            if response.body != body { return "text body \(printable(response.body)) is not \(printable(body))" }
            return response.header("Content-Type") == "text/plain; charset=utf-8" ? nil : "not text/plain"
        }
        return (request("GET", target), expected)
    }

    private static func admin(_ random: inout SeededRandom) -> ([UInt8], ExpectedResponse) {
        let session = encoded(nasty(&random) + word(&random), &random)
        let limit = random.int(0...20)
        let (method, target, status): (String, [UInt8], Int) = random.weighted([
            (2, ("GET", Array("/__mishap/health".utf8), 200)),
            (1, ("GET", Array("/__mishap/scenarios".utf8), 200)),
            (3, ("GET", Array("/__mishap/requests?limit=\(limit)".utf8), 200)),
            (1, ("GET", Array("/__mishap/requests?limit=3&session=".utf8) + session, 200)),
            (1, ("GET", Array("/__mishap/requests?limit=-1".utf8), 400)),
            (1, ("GET", Array("/__mishap/retries?session=".utf8) + session, 200)),
            (1, ("POST", Array("/__mishap/reset?session=".utf8) + session, 200)),
            (1, ("GET", Array("/__mishap/nowhere".utf8) + session, 404)),
            (1, ("DELETE", Array("/__mishap/health".utf8), 405)),
        ])
        // A session encoded into the path may hold `%00`: refused with 400 before routing.
        let path = target.split(separator: UInt8(ascii: "?"), maxSplits: 1).first ?? []
        let refusedForNul = path.firstRange(of: Array("%00".utf8)) != nil
        let expected = ExpectedResponse(statuses: [refusedForNul ? 400 : status], method: method) { response in
            jsonObject(response) == nil ? "not a JSON object: \(printable(response.body))" : nil
        }
        return (request(method, target), expected)
    }

    private static func http10(_ random: inout SeededRandom) -> ([UInt8], ExpectedResponse) {
        let value = word(&random)
        let expected = ExpectedResponse(statuses: [200]) { response in
            jsonObject(response)?["name"] as? String == String(decoding: value, as: UTF8.self) ? nil : "wrong echo \(printable(response.body))"
        }
        return (request("GET", Array("/echo?name=".utf8) + value, version: "HTTP/1.0", host: random.chance(0.5)), expected)
    }

    // MARK: Limits

    /// Headers past the 8 KiB limit: one large one, or many small ones; within the connection's
    /// buffer Mishap answers 431 and keeps the connection (a request after it is answered),
    /// past it libmicrohttpd answers 431 itself and closes.
    private static func headersOverLimit(_ random: inout SeededRandom) -> FuzzCase {
        var headers: [[UInt8]] = []
        let limit = HTTPFuzzTests.configuration.maxHeaderBytes
        switch random.int(0...2) {
        case 0: headers.append(Array("X-Pad: ".utf8) + [UInt8](repeating: UInt8(ascii: "p"), count: random.int(limit + 1...limit + 3000)))
        case 1: headers.append(Array("X-Pad: ".utf8) + [UInt8](repeating: UInt8(ascii: "p"), count: random.int(16_000...100_000)))
        default:
            for index in 0..<random.int(250...1200) { headers.append(Array("X-Many-\(index): ".utf8) + word(&random, 20...60)) }
        }
        let refused = ExpectedResponse(statuses: [431]) { response in
            response.has("Content-Type") && jsonObject(response) == nil ? "a 431 with a body that is not JSON" : nil
        }
        let (next, after) = valid("echo", &random, small: true)
        return FuzzCase(kind: "headersOverLimit", pieces: [request("GET", Array("/echo?name=big".utf8), headers: headers) + next],
                        ending: .awaitResponses, expected: [refused, after])
    }

    /// Bodies past the 64 KiB limit (413, then the connection goes on) and exactly at it.
    private static func bodyOverLimit(_ random: inout SeededRandom) -> FuzzCase {
        let limit = HTTPFuzzTests.configuration.maxBodyBytes
        let (next, after) = valid("echo", &random, small: true)
        if random.chance(0.25) {
            // Exactly at the limit: read whole, a JSON body padded with spaces.
            var body = Array(#"{"kind":"other","field":"edge"}"#.utf8)
            body += [UInt8](repeating: 0x20, count: limit - body.count)
            let accepted = ExpectedResponse(statuses: [202], method: "POST") { jsonObject($0)?["field"] as? String == "edge" ? nil : "wrong echo" }
            return FuzzCase(kind: "bodyAtLimit", pieces: [request("POST", Array("/submit".utf8), headers: [Array("Content-Type: application/json".utf8)], body: body) + next],
                            ending: .awaitResponses, expected: [accepted, after])
        }
        let body = (0..<random.int(limit + 1...limit + 40_000)).map { _ in random.byte() }
        let bytes = random.chance(0.5)
            ? request("POST", Array("/submit".utf8), body: body)
            : request("POST", Array("/submit".utf8), headers: [Array("Transfer-Encoding: chunked".utf8)]) + chunkedBody(body, &random)
        let refused = ExpectedResponse(statuses: [413], method: "POST") { response in
            jsonObject(response)?["reason"] as? String == "Request body larger than \(limit) bytes" ? nil : "not the 413 body: \(printable(response.body))"
        }
        return FuzzCase(kind: "bodyOverLimit", pieces: [bytes + next], ending: .awaitResponses, expected: [refused, after])
    }

    // MARK: Broken requests

    private static func requestLine(_ random: inout SeededRandom) -> [UInt8] {
        let method = random.pick(["GET", "GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE", "get", "Get", "GETT",
                                  "G ET", "", "\0GET", "GET\0", "PRI", "BREW", String(repeating: "A", count: 300), "GÉT", "\tGET", "GET:"])
        let huge = "/echo?name=" + String(repeating: "a", count: random.int(2000...30_000))
        let target = random.pick(["/echo?name=a", "*", "http://127.0.0.1/echo?name=abs", "http://[::1]:80/echo", "https://x/echo",
                                  "//echo", "echo", "", "/", "/echo?", "/echo?name", "/echo?=x", "/echo?name=%", "/echo?name=%G1",
                                  "/echo?name=%00", "/echo?name=%C3%28", "/echo?name=%C0%AF", "/echo?name=%%", "/%", "/%00", "/%2e%2e/",
                                  "/items/%2F", "/items/%00x", "/items/a%ZZ", "/echo#frag", "/echo?name=a b", "/ec ho", "/echo\t",
                                  "/../../etc/passwd", "/__mishap/requests?limit=99999999999999999999", "/__mishap/%2e%2e/health",
                                  "/__mishap/", "/__mishap", "/static/", "/static", "/items/", "/items//x", huge])
        let version = random.pick(["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/9.9", "HTTP/1", "HTTP/1.10", "HTTP/2.0", "HTTP/0.9",
                                   "http/1.1", "HTTP/1.1 extra", "", "HTTP/", "HTTP/1.", "HTTP/11", "HTTPS/1.1", "HTTP/1.1\0", " HTTP/1.1"])
        let separator = random.pick([" ", " ", " ", "  ", "\t", "", "\0", " \t"])
        let end = random.pick(["\r\n", "\r\n", "\n", "\r", "\r\r\n", "\n\r"])
        var line = Array((method + separator + target + separator + version).utf8)
        if random.chance(0.2) {
            line.insert(random.pick([0x00, 0x0D, 0x0A, 0x20, 0x09, 0x7F, 0xFF]), at: random.int(0...line.count))
        }
        var bytes = random.chance(0.1) ? Array("\r\n".utf8) : []
        bytes += line + Array(end.utf8)
        if random.chance(0.8) { bytes += Array("Host: 127.0.0.1".utf8) + Array(end.utf8) }
        return bytes + Array(end.utf8)
    }

    private static func headerJunk(_ random: inout SeededRandom) -> [UInt8] {
        let lines: [String] = [
            "NoColonHere", ": empty-name", "Bad Name: x", "Host : 127.0.0.1", "X-Thing:\0nul", "X-Thing: a\0b", "X-\0Thing: v",
            " leading: space", "X-Thing: a\r\n b", "X-Thing: a\r\n\tb\r\n  c", "X-Thing: folded\r\n X-Injected: yes",
            "X-Thing:", "X-Thing: \u{1}\u{7F}\u{1B}[31m", "X-Thing: a\rb", "X-Thing: a\nX-Injected: yes", "Host: other",
            "Host:", "Content-Length: 0", "X-Thing: %0d%0aX-Injected:%20yes", "X-Mishap-Rule: echo", "X-Mishap-Rule: slow",
            "X-Mishap-Rule: nope", "X-Mishap-Rule: maintenance", "X-Mishap-Session: \u{1}\u{7F}", "X-Mishap-Session: ",
            "Connection: close", "Connection: keep-alive, Upgrade", "Upgrade: websocket", "Expect: 100-continue",
            "Expect: bogus", "Transfer-Encoding: chunked", "Accept-Encoding: gzip", "X-Thing: \t\t",
        ]
        var junk: [[UInt8]] = lines.map { Array($0.utf8) }
        junk += [
            Array("X-Thing: ".utf8) + [0xFF, 0xFE, 0xC0, 0xAF, 0xED, 0xA0, 0x80],
            Array(String(repeating: "N", count: 2000).utf8) + Array(": long name".utf8),
            Array("X-Thing: ".utf8) + [UInt8](repeating: UInt8(ascii: "v"), count: 3000),
            [0xC3, 0xA9] + Array(": non-ASCII name".utf8),
        ]
        var headers: [[UInt8]] = []
        for _ in 0..<random.int(1...6) { headers.append(random.pick(junk)) }
        if random.chance(0.1) {
            for index in 0..<random.int(50...400) { headers.append(Array("X-N\(index): v".utf8)) }
        }
        if random.chance(0.03) {
            headers.append(Array("Cookie: ".utf8) + Array((0..<random.int(10...900)).map { "c\($0)=v" }.joined(separator: "; ").utf8))
        }
        var target = random.pick(["/echo?name=junk", "/echo?name=junk&mode=slow", "/items/x", "/static/a"])
        if random.chance(0.03) { target += (0..<random.int(10...1200)).map { "&p\($0)=\($0)" }.joined() }
        var bytes = request(random.pick(["GET", "GET", "POST"]), Array(target.utf8), host: random.chance(0.8), headers: headers)
        if random.chance(0.3) { bytes = bytes.map { $0 } + valid("echo", &random, small: true).0 }
        if random.chance(0.2) {
            // Bare LF line ends for some lines.
            bytes = replaceSomeCRLF(bytes, &random)
        }
        return bytes
    }

    private static func replaceSomeCRLF(_ bytes: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A, random.chance(0.4) {
                index += 1
                continue
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    }

    private static func contentLength(_ random: inout SeededRandom) -> [UInt8] {
        let body = random.chance(0.6) ? Array(#"{"kind":"vip","field":"cl"}"#.utf8) : word(&random, 0...20)
        let values = ["-1", "abc", "1e3", "0x10", " 5", "5 ", "+5", "99999999999999999999999", "18446744073709551615",
                      "9223372036854775807", "5, 5", "5,6", "", "0", "00005", "5\0", "\(body.count)", "\(body.count + 10)",
                      "\(max(0, body.count - 5))", "\(body.count), \(body.count)", "1" + String(repeating: "0", count: 40)]
        var headers: [[UInt8]] = [Array("Content-Type: application/json".utf8)]
        for _ in 0..<random.int(1...2) { headers.append(Array("Content-Length: \(random.pick(values))".utf8)) }
        if random.chance(0.2) { headers.append(Array("Transfer-Encoding: chunked".utf8)) }
        headers.shuffle(using: &random)
        var bytes = request("POST", Array("/submit".utf8), headers: headers) + body
        if random.chance(0.3) { bytes += valid("echo", &random, small: true).0 }
        return bytes
    }

    private static func chunked(_ random: inout SeededRandom) -> [UInt8] {
        let coding = random.pick(["chunked", "chunked", "chunked", "Chunked", "CHUNKED", "chunked, chunked", "gzip, chunked",
                                  "chunked, gzip", "identity", " chunked", "chunked;q=1", "x", ""])
        var headers: [[UInt8]] = [Array("Content-Type: application/json".utf8), Array("Transfer-Encoding: \(coding)".utf8)]
        if random.chance(0.2) { headers.append(Array("Content-Length: \(random.int(0...40))".utf8)) }
        if random.chance(0.1) { headers.append(Array("Transfer-Encoding: chunked".utf8)) }
        headers.shuffle(using: &random)
        var body: [UInt8] = []
        let payload = Array(#"{"kind":"vip","field":"chunks"}"#.utf8)
        var offset = 0
        for _ in 0..<random.int(1...5) {
            let size = min(payload.count - offset, random.int(0...12))
            let declared = random.weighted([
                (6, String(size, radix: 16)), (1, "zz"), (1, "-1"), (1, "fffffffffffffffffff"), (1, "0x10"), (1, " \(size)"),
                (1, "\(size) "), (1, "\(size);ext=1"), (1, "\(size);"), (1, "7fffffffffffffff"), (1, ""), (1, String(size + 1, radix: 16)),
                (1, "ffffffff"),
            ])
            body += Array(declared.utf8) + Array(random.pick(["\r\n", "\r\n", "\r\n", "\n", ""]).utf8)
            body += payload[offset..<offset + size]
            offset += size
            body += Array(random.pick(["\r\n", "\r\n", "\r\n", "\n", "", "xx\r\n"]).utf8)
        }
        if random.chance(0.8) {
            body += Array("0".utf8) + crlf
            for _ in 0..<random.int(0...2) {
                body += Array(random.pick(["X-Trailer: a", "Content-Length: 5", "bad trailer", "X-Thing: \r\nX-Injected: yes", ": x"]).utf8) + crlf
            }
            if random.chance(0.9) { body += crlf }
        }
        var bytes = request("POST", Array("/submit".utf8), headers: headers) + body
        if random.chance(0.3) { bytes += valid("echo", &random, small: true).0 }
        return bytes
    }

    /// Invalid percent-encoding and raw invalid UTF-8 in the path, the query and header values.
    private static func encoding(_ random: inout SeededRandom) -> [UInt8] {
        let raw: [[UInt8]] = [
            Array("%".utf8), Array("%G1".utf8), Array("%00".utf8), Array("%C3%28".utf8), Array("%C0%AF".utf8), Array("%ED%A0%80".utf8),
            Array("%F8%88%80%80%80".utf8), Array("%0d%0aX-Injected:%20yes".utf8), Array("%%%".utf8), Array("%2".utf8), Array("+".utf8),
            [0xC3, 0x28], [0xFF], [0xC0, 0xAF], [0x80], [0xED, 0xA0, 0x80], Array("é".utf8), [0x7F], [0x01],
        ]
        func value(_ random: inout SeededRandom) -> [UInt8] {
            (0..<random.int(1...4)).flatMap { _ in random.chance(0.5) ? random.pick(raw) : word(&random) }
        }
        let (first, second) = (value(&random), value(&random))
        let target: [UInt8] = random.weighted([
            (3, Array("/echo?name=".utf8) + first),
            (1, Array("/echo?".utf8) + first + Array("=x&name=".utf8) + second),
            (2, Array("/items/".utf8) + first),
            (1, Array("/static/".utf8) + first + Array("?name=".utf8) + second),
            (1, Array("/".utf8) + first),
            (1, Array("/__mishap/requests?limit=2&session=".utf8) + first),
        ])
        var headers: [[UInt8]] = []
        if random.chance(0.6) { headers.append(Array("X-Thing: ".utf8) + value(&random)) }
        if random.chance(0.2) { headers.append(Array("X-Mishap-Session: ".utf8) + value(&random)) }
        return request(random.chance(0.8) ? "GET" : "DELETE", target, headers: headers)
    }

    /// Byte-level damage: bits flipped, bytes inserted, deleted, duplicated, overwritten, or the
    /// end cut off.
    static func mutate(_ original: [UInt8], _ random: inout SeededRandom) -> [UInt8] {
        var bytes = original
        let interesting: [[UInt8]] = [
            [0x0D], [0x0A], [0x0D, 0x0A], [0x0D, 0x0A, 0x0D, 0x0A], [0x00], [0x20], [0x09], [0x3A], [0x25], [0xFF], [0x80],
            Array("%00".utf8), Array("Content-Length: 5\r\n".utf8), Array("Transfer-Encoding: chunked\r\n".utf8),
            Array("\r\n X".utf8), Array("9999999999".utf8), Array("-".utf8), Array(";".utf8),
        ]
        for _ in 0..<random.int(1...4) where !bytes.isEmpty {
            let at = random.int(0...bytes.count - 1)
            switch random.int(0...6) {
            case 0: bytes[at] ^= 1 << UInt8(random.int(0...7))
            case 1: bytes[at] = random.pick(interesting)[0]
            case 2: bytes.insert(contentsOf: random.chance(0.7) ? random.pick(interesting) : (0..<random.int(1...8)).map { _ in random.byte() }, at: at)
            case 3: bytes.removeSubrange(at..<min(bytes.count, at + random.int(1...16)))
            case 4:
                let piece = bytes[at..<min(bytes.count, at + random.int(1...32))]
                for _ in 0..<random.int(1...3) { bytes.insert(contentsOf: piece, at: at) }
            case 5: bytes[at] = random.byte()
            default: bytes.removeSubrange(at...)
            }
        }
        return bytes
    }

    /// A connection reset by the client mid-headers, mid-body, or while its (delayed) answer is
    /// being prepared.
    private static func abort(_ random: inout SeededRandom) -> FuzzCase {
        let whole: [UInt8]
        switch random.int(0...2) {
        case 0: whole = valid("echo", &random).0
        case 1: whole = request("POST", Array("/submit".utf8), headers: [Array("Content-Type: application/json".utf8)],
                                body: Array(#"{"kind":"vip","field":"reset"}"#.utf8) + [UInt8](repeating: 0x20, count: random.int(0...30_000)))
        default: whole = request("GET", Array("/echo?name=reset&mode=slow".utf8))
        }
        let cut = random.chance(0.3) ? whole.count : random.int(1...whole.count)
        return FuzzCase(kind: "abort", pieces: split(Array(whole[..<cut]), into: random.int(1...3), &random), ending: .abort)
    }
}
