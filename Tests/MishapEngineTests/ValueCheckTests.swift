import MishapPattern
import Testing
@testable import MishapEngine

/// Every keyword a compiled schema checks, each with a value that passes and one that fails
/// with the problem named at its place.
@Suite struct ValueCheckTests {
    /// The problems of the JSON text `json` against `keywords`, at the body's place.
    private func problems(_ keywords: ValueCheck.Keywords, _ json: String) -> [String] {
        guard let value = JSONValue.parse(Array(json.utf8)) else {
            Issue.record("not JSON: \(json)")
            return []
        }
        var problems = ContractProblems()
        ValueCheck(keywords).check(value, at: ContractProblems.bodyPlace, into: &problems)
        return problems.list
    }

    private func keywords(_ change: (inout ValueCheck.Keywords) -> Void) -> ValueCheck.Keywords {
        var keywords = ValueCheck.Keywords()
        change(&keywords)
        return keywords
    }

    /// One keyword's passing values and failing ones, with the problem each failing one gets.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var keywords: ValueCheck.Keywords
        var passing: [String]
        var failing: [(String, String)]
        var testDescription: String { name }
    }

    static let cases: [Case] = {
        func make(_ name: String, _ change: (inout ValueCheck.Keywords) -> Void, passing: [String], failing: [(String, String)]) -> Case {
            var keywords = ValueCheck.Keywords()
            change(&keywords)
            return Case(name: name, keywords: keywords, passing: passing, failing: failing)
        }
        let name = ValueCheck(ValueCheck.Keywords())
        var stringKeywords = ValueCheck.Keywords()
        stringKeywords.types = .string
        let string = ValueCheck(stringKeywords)
        var integerKeywords = ValueCheck.Keywords()
        integerKeywords.types = .integer
        let integer = ValueCheck(integerKeywords)
        return [
            make("type string", { $0.types = .string }, passing: [#""a""#], failing: [("42", "body: expected a string, got 42")]),
            make("type integer", { $0.types = .integer }, passing: ["42", "-3", "2.0", "1e3"],
                 failing: [("4.5", "body: expected an integer, got 4.5"), (#""4""#, #"body: expected an integer, got "4""#)]),
            make("type number", { $0.types = .number }, passing: ["4.5", "7"], failing: [("true", "body: expected a number, got true")]),
            make("type boolean", { $0.types = .boolean }, passing: ["false"], failing: [("0", "body: expected a boolean, got 0")]),
            make("type object", { $0.types = .object }, passing: ["{}"], failing: [("[]", "body: expected an object, got []")]),
            make("type array", { $0.types = .array }, passing: ["[1]"], failing: [("{}", "body: expected an array, got {}")]),
            make("type null (3.0 nullable, 3.1 list)", { $0.types = [.string, .null] }, passing: ["null", #""x""#],
                 failing: [("1", "body: expected a string or null, got 1")]),
            make("enum", { $0.enumValues = [.string("cat"), .string("dog"), .number("1")] }, passing: [#""dog""#, "1.0"],
                 failing: [(#""bird""#, #"body: expected one of "cat", "dog", 1, got "bird""#)]),
            make("const", { $0.constValue = [.object([("a", .bool(true))])] }, passing: [#"{"a":true}"#],
                 failing: [(#"{"a":false}"#, #"body: expected {"a":true}, got {"a":false}"#)]),
            make("const null", { $0.constValue = [.null] }, passing: ["null"], failing: [("0", "body: expected null, got 0")]),
            make("minLength", { $0.minLength = 2 }, passing: [#""ab""#, #""é😀""#],
                 failing: [(#""a""#, "body: expected at least 2 character(s), got 1")]),
            make("maxLength", { $0.maxLength = 2 }, passing: [#""ab""#], failing: [(#""abc""#, "body: expected at most 2 character(s), got 3")]),
            make("pattern", { $0.pattern = try? Pattern("^[a-z]+$") }, passing: [#""abc""#],
                 failing: [(#""aBc""#, #"body: expected a string matching ^[a-z]+$, got "aBc""#)]),
            make("pattern unanchored", { $0.pattern = try? Pattern("[0-9]") }, passing: [#""a1b""#],
                 failing: [(#""ab""#, #"body: expected a string matching [0-9], got "ab""#)]),
            make("minimum", { $0.minimum = .init(value: 1, exclusive: false, written: "1") }, passing: ["1", "2"],
                 failing: [("0.5", "body: expected a number >= 1, got 0.5")]),
            make("exclusiveMinimum", { $0.minimum = .init(value: 1, exclusive: true, written: "1") }, passing: ["1.01"],
                 failing: [("1", "body: expected a number > 1, got 1")]),
            make("maximum", { $0.maximum = .init(value: 10, exclusive: false, written: "10") }, passing: ["10"],
                 failing: [("11", "body: expected a number <= 10, got 11")]),
            make("exclusiveMaximum", { $0.maximum = .init(value: 10, exclusive: true, written: "10") }, passing: ["9.9"],
                 failing: [("10", "body: expected a number < 10, got 10")]),
            make("required", { $0.required = ["name", "a/b"] }, passing: [#"{"name":1,"a/b":2}"#],
                 failing: [(#"{"name":1}"#, "/a~1b: required")]),
            make("properties", { $0.properties = ["name": string, "age": integer] }, passing: [#"{"name":"x","age":3,"other":1}"#],
                 failing: [(#"{"name":1}"#, "/name: expected a string, got 1")]),
            make("additionalProperties false", { $0.properties = ["name": name]; $0.additional = .forbidden }, passing: [#"{"name":1}"#],
                 failing: [(#"{"name":1,"extra":2}"#, "/extra: not allowed (additionalProperties is false)")]),
            make("additionalProperties schema", { $0.additional = .checked(integer) }, passing: [#"{"a":1,"b":2}"#],
                 failing: [(#"{"a":"x"}"#, #"/a: expected an integer, got "x""#)]),
            make("items", { $0.items = integer }, passing: ["[1,2]", "[]"], failing: [(#"[1,"2"]"#, #"/1: expected an integer, got "2""#)]),
            make("minItems", { $0.minItems = 1 }, passing: ["[1]"], failing: [("[]", "body: expected at least 1 item(s), got 0")]),
            make("maxItems", { $0.maxItems = 1 }, passing: ["[1]"], failing: [("[1,2]", "body: expected at most 1 item(s), got 2")]),
            make("format email", { $0.types = .string; $0.format = .email }, passing: [#""a.b@example.com""#],
                 failing: [(#""a@@b""#, #"body: expected a string in format email, got "a@@b""#),
                           ("42", "body: expected a string in format email, got 42")]),
            make("format uuid", { $0.format = .uuid }, passing: [#""123e4567-e89b-12d3-a456-426614174000""#],
                 failing: [(#""123e4567e89b12d3a456426614174000""#, #"body: expected a string in format uuid, got "123e4567e89b12d3a456426614174000""#)]),
            make("format date", { $0.format = .date }, passing: [#""2024-02-29""#],
                 failing: [(#""2023-02-29""#, #"body: expected a string in format date, got "2023-02-29""#)]),
            make("format date-time", { $0.format = .dateTime }, passing: [#""2024-02-29T10:20:30Z""#, #""2024-02-29T10:20:30.5+01:00""#],
                 failing: [(#""2024-02-29 10:20""#, #"body: expected a string in format date-time, got "2024-02-29 10:20""#)]),
            make("format uri", { $0.format = .uri }, passing: [#""https://example.com/a?b""#],
                 failing: [(#""not a uri""#, #"body: expected a string in format uri, got "not a uri""#)]),
            make("format int32", { $0.format = .int32 }, passing: ["2147483647"],
                 failing: [("2147483648", "body: expected a number in format int32, got 2147483648")]),
            make("multipleOf", { $0.multipleOf = 0.5 }, passing: ["1.5", "4"], failing: [("1.25", "body: expected a multiple of 0.5, got 1.25")]),
            make("multipleOf whole", { $0.multipleOf = 3 }, passing: ["9"], failing: [("10", "body: expected a multiple of 3, got 10")]),
            make("uniqueItems", { $0.uniqueItems = true }, passing: [#"[1,"1",{"a":1}]"#],
                 failing: [(#"[{"a":1,"b":2},3,{"b":2,"a":1}]"#, "/2: a duplicate of item 0 (uniqueItems is true)")]),
            make("minProperties", { $0.minProperties = 1 }, passing: [#"{"a":1}"#], failing: [("{}", "body: expected at least 1 member(s), got 0")]),
            make("maxProperties", { $0.maxProperties = 1 }, passing: [#"{"a":1}"#],
                 failing: [(#"{"a":1,"b":2}"#, "body: expected at most 1 member(s), got 2")]),
            make("not", { $0.refused = string }, passing: ["1"], failing: [(#""a""#, #"body: matches the schema of not, got "a""#)]),
            make("allOf", { $0.allOf = [string, ValueCheck(stringKeywords.with { $0.minLength = 3 })] }, passing: [#""abc""#],
                 failing: [(#""ab""#, "body: expected at least 3 character(s), got 2")]),
            make("anyOf", { $0.anyOf = [string, integer] }, passing: [#""a""#, "1"],
                 failing: [("true", "body: matches none of the 2 schemas of anyOf (the first says: body: expected a string, got true)")]),
            make("oneOf", { $0.oneOf = [integer, ValueCheck(ValueCheck.Keywords().with { $0.types = .number })] }, passing: ["1.5"],
                 failing: [("1", "body: matches 2 of the 2 schemas of oneOf; exactly one must match"),
                           (#""x""#, #"body: matches none of the 2 schemas of oneOf (the first says: body: expected an integer, got "x")"#)]),
        ]
    }()

    @Test(arguments: cases) func keywordPassesAndFails(_ keywordCase: Case) {
        for value in keywordCase.passing {
            #expect(problems(keywordCase.keywords, value) == [], "\(value) should pass \(keywordCase.name)")
        }
        for (value, problem) in keywordCase.failing {
            #expect(problems(keywordCase.keywords, value) == [problem], "\(value) against \(keywordCase.name)")
        }
    }

    /// Every problem of a value is listed, nested places as JSON pointers, up to the limit.
    @Test func listsEveryProblemWithItsPlace() {
        var item = ValueCheck.Keywords()
        item.types = .object
        item.required = ["id"]
        item.properties = ["email": ValueCheck(keywords { $0.types = .string; $0.format = .email })]
        let list = keywords { $0.types = .object; $0.properties = ["pets": ValueCheck(keywords { $0.items = ValueCheck(item) })] }
        #expect(problems(list, #"{"pets":[{"id":1,"email":42},{"email":"a@b.c"}]}"#) == [
            "/pets/0/email: expected a string in format email, got 42",
            "/pets/1/id: required",
        ])
        var bounded = ContractProblems(limit: 2)
        ValueCheck(keywords { $0.items = ValueCheck(keywords { $0.types = .string }) })
            .check(.array((0..<5).map { .number(String($0)) }), at: "body", into: &bounded)
        #expect(bounded.list.count == 2)
    }
}

extension ValueCheck.Keywords {
    /// These keywords with `change` made.
    func with(_ change: (inout ValueCheck.Keywords) -> Void) -> ValueCheck.Keywords {
        var copy = self
        change(&copy)
        return copy
    }
}
