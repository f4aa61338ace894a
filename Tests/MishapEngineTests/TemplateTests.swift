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

    @Test func adjacentLiteralsMerge() {
        let template = Template(segments: [.literal([1]), .literal([2]), .value(.path), .literal([3])], escaping: .none)
        #expect(template.segments.count == 3)
        #expect(Template(literal: "static").staticBytes == Array("static".utf8))
        #expect(template.staticBytes == nil)
    }
}
