import Testing
@testable import MishapEngine

@Suite struct RequestBodyTests {
    private func body(_ text: String, contentType: String? = "application/json") -> RequestBody {
        let headers = contentType.map { [Field("content-TYPE", $0)] } ?? []
        return RequestBody(of: Request(method: "POST", path: "/", headers: headers, body: Array(text.utf8)))
    }

    @Test func readsJSONFields() {
        let parsed = body(#"{"email":"john@doe.com","age":42,"ok":true,"none":null,"user":{"name":"J\u00f6rg","tags":["a","b"]}}"#)
        #expect(parsed.value(at: ["email"]) == "john@doe.com")
        #expect(parsed.value(at: ["age"]) == "42")
        #expect(parsed.value(at: ["ok"]) == "true")
        #expect(parsed.value(at: ["none"]) == nil)
        #expect(parsed.value(at: ["user", "name"]) == "Jörg")
        #expect(parsed.value(at: ["user", "tags", "1"]) == "b")
        #expect(parsed.value(at: ["user", "tags"]) == #"["a","b"]"#)
        #expect(parsed.value(at: ["missing"]) == nil)
    }

    @Test func rejectsInvalidJSON() {
        for text in ["{bad", "{\"a\":}", "[1,]", "{\"a\":1} x", "\"\\x\"", "{\"a\":\"\u{1}\"}", "01", "{\"a\":\"\\ud800\"}"] {
            guard case .malformed = body(text) else {
                Issue.record("accepted \(text)")
                continue
            }
        }
    }

    @Test func acceptsValidJSONEdgeCases() {
        for text in ["{}", "[]", " {\"a\" : [ 1 , -2.5e+3 , true , null ] } ", "\"\\ud83d\\ude00\"", "0", "-0.0"] {
            if case .malformed = body(text) { Issue.record("rejected \(text)") }
        }
        #expect(body(#"{"s":"\ud83d\ude00"}"#).value(at: ["s"]) == "😀")
    }

    /// Strings without escapes are taken whole; an escape anywhere, raw invalid UTF-8 or a raw
    /// control character are still handled as before.
    @Test func stringsWithAndWithoutEscapes() {
        #expect(body(#"{"a":"plain text, no escape","b":"x\"y","c":"mid\u00e9dle\n","d":""}"#).value(at: ["a"]) == "plain text, no escape")
        #expect(body(#"{"b":"x\"y"}"#).value(at: ["b"]) == "x\"y")
        #expect(body(#"{"c":"mid\u00e9dle\n"}"#).value(at: ["c"]) == "mid\u{e9}dle\n")
        #expect(body(#"{"d":""}"#).value(at: ["d"]) == "")
        #expect(body(#"{"k\"ey":"v"}"#).value(at: ["k\"ey"]) == "v")
        let invalid = RequestBody(of: Request(method: "POST", path: "/", headers: [Field("Content-Type", "application/json")],
                                              body: Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)))
        guard case .malformed = invalid else {
            Issue.record("accepted invalid UTF-8 in a string")
            return
        }
        guard case .malformed = body("{\"a\":\"tab\there\"}") else {
            Issue.record("accepted a raw tab in a string")
            return
        }
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        guard case .malformed = body(deep) else {
            Issue.record("a 100,000-deep body was accepted")
            return
        }
    }

    @Test func readsFormFields() {
        let parsed = body("email=john%40doe.com&password=only+john&flag&empty=", contentType: "application/x-www-form-urlencoded; charset=utf-8")
        #expect(parsed.value(at: ["email"]) == "john@doe.com")
        #expect(parsed.value(at: ["password"]) == "only john")
        #expect(parsed.value(at: ["flag"]) == "")
        #expect(parsed.value(at: ["empty"]) == "")
        #expect(parsed.value(at: ["absent"]) == nil)
    }

    @Test func emptyBodyHasNoFieldsAndIsNotMalformed() {
        guard case .empty = body("") else {
            Issue.record("empty body not read as empty")
            return
        }
    }
}
