import Foundation
import Testing
@testable import MishapEngine

@Suite struct TemplateTests {
    private func render(_ template: Template, query: [Field]) -> String {
        var context = MatchContext(request: Request(method: "GET", path: "/p", query: query))
        return String(decoding: template.render(context: &context), as: UTF8.self)
    }

    @Test func substitutesRequestValues() {
        let template = Template(segments: [.literal(Array("Hi ".utf8)), .value(.query("name")), .literal(Array(" via ".utf8)), .value(.method)], escaping: .none)
        #expect(render(template, query: [Field("name", "Ann")]) == "Hi Ann via GET")
        #expect(render(template, query: []) == "Hi  via GET")
    }

    @Test func jsonEscapingKeepsBodiesValid() {
        let template = Template(segments: [.literal(Array(#"{"v":""#.utf8)), .value(.query("v")), .literal(Array(#""}"#.utf8))], escaping: .json)
        let hostile = "a\"b\\c\nd\u{0}e\u{7f}"
        #expect(render(template, query: [Field("v", hostile)]) == #"{"v":"a\"b\\c\nd\u0000e\u007f"}"#)
    }

    @Test func headerEscapingDropsLineBreaks() {
        let template = Template(segments: [.value(.query("v"))], escaping: .header)
        #expect(render(template, query: [Field("v", "x\r\nSet-Cookie: evil")]) == "xSet-Cookie: evil")
    }

    /// Every character a client can send, alone and in a crowd, comes back as the same string
    /// from a JSON body that parses; in a header it leaves no control character but tab.
    @Test func everyValueStaysValidJSONAndAHeaderLine() throws {
        let json = Template(segments: [.literal(Array(#"{"v":""#.utf8)), .value(.query("v")), .literal(Array(#""}"#.utf8))], escaping: .json)
        let header = Template(segments: [.literal(Array("a".utf8)), .value(.query("v"))], escaping: .header)
        var values = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) }
        values += ["\u{2028}\u{2029}", "\u{FFFD}", "👨‍👩‍👧", "e\u{301}", "\\\"\\u0000\"", "\r\nX-Injected: yes\r\n\r\n{\"a\":1}"]
        values.append(String(decoding: [0xC3, 0x28, 0xFF, 0xED, 0xA0, 0x80, 0xF0, 0x28, 0x8C], as: UTF8.self))
        values.append(values.joined())
        for value in values {
            let body = render(json, query: [Field("v", value)])
            let parsed = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: String]
            #expect(parsed?["v"] == value, "\(Array(value.unicodeScalars))")
            let line = render(header, query: [Field("v", value)])
            #expect(!line.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }, "\(Array(value.unicodeScalars))")
            #expect(line.utf8.count >= 1)
        }
    }

    @Test func adjacentLiteralsMerge() {
        let template = Template(segments: [.literal([1]), .literal([2]), .value(.path), .literal([3])], escaping: .none)
        #expect(template.segments.count == 3)
        #expect(Template(literal: "static").staticBytes == Array("static".utf8))
        #expect(template.staticBytes == nil)
    }

    @Test func literalRunsMergeInOrderAroundValues() {
        let template = Template(segments: [.literal([]), .value(.path), .literal([1, 2]), .literal([]), .literal([3]),
                                           .literal([4, 5]), .value(.method), .value(.path), .literal([6])], escaping: .none)
        let literals = template.segments.map { segment -> [UInt8]? in
            if case .literal(let bytes) = segment { return bytes }
            return nil
        }
        #expect(literals == [[], nil, [1, 2, 3, 4, 5], nil, nil, [6]])
        #expect(Template(segments: [.literal([]), .literal([])], escaping: .none).staticBytes == [])
        #expect(Template(segments: [.literal([7]), .literal([8, 9])], escaping: .none).staticBytes == [7, 8, 9])
    }

    @Test func equalStaticPartsAreSharedAndUnequalOnesKept() {
        let shared = SharedResponseParts()
        let json = [Field("Content-Type", "application/json")]
        let first = shared.fields(json)
        #expect(shared.fields([Field("Content-Type", "application/json")]) == first)
        #expect(shared.fields([Field("Content-Type", "text/plain")]) == [Field("Content-Type", "text/plain")])
        let body = Template(literal: "{}")
        #expect(shared.body(Template(literal: "{}"), bytes: Array("{}".utf8)).staticBytes == Array("{}".utf8))
        #expect(shared.body(body, bytes: Array("[]".utf8)).staticBytes == Array("{}".utf8), "a new body is stored as given")
        let ok = shared.prepared(status: 200, headers: json, body: Array("{}".utf8))
        #expect(shared.prepared(status: 200, headers: json, body: Array("{}".utf8)) === ok)
        #expect(shared.prepared(status: 201, headers: json, body: Array("{}".utf8)) !== ok)
        #expect(shared.prepared(status: 200, headers: [], body: Array("{}".utf8)) !== ok)
        #expect(shared.prepared(status: 200, headers: json, body: Array("{ }".utf8)) !== ok)
    }

    /// Parts of one hash (a collision, which 64-bit hashes make rare) are all kept, each found
    /// by its own value, and none is found under another hash.
    @Test func partsOfOneHashAreKeptApart() {
        var table = SharedResponseParts.HashedTable<String>()
        #expect(table.find(7, { _ in true }) == nil)
        for part in ["first", "second", "third"] { table.add(part, hash: 7) }
        table.add("other", hash: 8)
        for part in ["first", "second", "third"] {
            #expect(table.find(7, { $0 == part }) == part)
        }
        #expect(table.find(7, { $0 == "other" }) == nil)
        #expect(table.find(8, { $0 == "other" }) == "other")
        #expect(table.find(8, { $0 == "first" }) == nil)
        #expect(table.find(9, { _ in true }) == nil)
    }
}
