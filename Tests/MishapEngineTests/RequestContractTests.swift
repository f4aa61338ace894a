import Testing
@testable import MishapEngine

/// Which operation a request meets (base path, templates, literal paths first) and how its
/// parameters' text and its body are checked.
@Suite struct RequestContractTests {
    private static func check(_ change: (inout ValueCheck.Keywords) -> Void) -> ValueCheck {
        var keywords = ValueCheck.Keywords()
        change(&keywords)
        return ValueCheck(keywords)
    }

    private static let contract = RequestContract(source: "t.yaml", basePath: "/v1/", operations: [
        OperationContract(method: "GET", template: "/pets/{id}", parameters: [
            .init(location: .path, name: "id", required: true, check: check { $0.types = .integer }),
            .init(location: .query, name: "tags", required: false, check: check { $0.types = .array; $0.items = check { $0.types = .integer } }),
            .init(location: .header, name: "X-Trace", required: true, check: check { $0.types = .string; $0.minLength = 2 }),
        ], body: nil),
        OperationContract(method: "GET", template: "/pets/mine", parameters: [
            .init(location: .query, name: "all", required: true, check: check { $0.types = .boolean }),
        ], body: nil),
        OperationContract(method: "POST", template: "/pets", parameters: [], body: .init(
            required: true, mediaTypes: ["application/json"], json: check { $0.types = .object; $0.required = ["name"] })),
    ])

    private func problems(_ request: Request) -> [String]? {
        Self.contract.problems(for: request)?.problems.list
    }

    @Test func matchesUnderTheBasePathOnly() {
        #expect(problems(Request(method: "GET", path: "/pets/1", headers: [Field("x-trace", "ab")])) == nil)
        #expect(problems(Request(method: "GET", path: "/v1/pets/1", headers: [Field("x-trace", "ab")])) == [])
        #expect(problems(Request(method: "DELETE", path: "/v1/pets/1")) == nil)
        #expect(problems(Request(method: "GET", path: "/v1/pets/1/more")) == nil)
        #expect(problems(Request(method: "GET", path: "/v10/pets/1")) == nil)
    }

    @Test func literalPathsComeBeforeTemplates() {
        #expect(problems(Request(method: "GET", path: "/v1/pets/mine", query: [Field("all", "true")])) == [])
        #expect(problems(Request(method: "GET", path: "/v1/pets/mine", query: [Field("all", "yes")])) == [#"query all: expected a boolean, got "yes""#])
    }

    @Test func parametersAreReadAsTheirSchemaTypes() {
        #expect(problems(Request(method: "GET", path: "/v1/pets/x", query: [Field("tags", "1"), Field("tags", "b")])) == [
            #"path id: expected an integer, got "x""#, #"query tags/1: expected an integer, got "b""#, "header X-Trace: required",
        ])
        #expect(problems(Request(method: "GET", path: "/v1/pets/7", query: [Field("tags", "1,2")], headers: [Field("X-TRACE", "a")])) == [
            "header X-Trace: expected at least 2 character(s), got 1",
        ])
    }

    @Test func bodiesAreRequiredTypedAndParsed() {
        func post(_ body: String, _ type: String? = "application/json") -> [String]? {
            problems(Request(method: "POST", path: "/v1/pets", headers: type.map { [Field("Content-Type", $0)] } ?? [], body: Array(body.utf8)))
        }
        #expect(post(#"{"name":"Rex"}"#) == [])
        #expect(post(#"{"name":"Rex"}"#, nil) == [])
        #expect(post(#"{"name":"Rex"}"#, "Application/JSON; charset=utf-8") == [])
        #expect(post("") == ["body: required"])
        #expect(post("{") == ["body: not valid JSON"])
        #expect(post("{}") == ["/name: required"])
        #expect(post("name=Rex", "application/x-www-form-urlencoded")
                == ["body: Content-Type application/x-www-form-urlencoded is not one the operation accepts (application/json)"])
    }

    @Test func theRefusalIsMishapsErrorBodyWithTheProblems() throws {
        var problems = ContractProblems()
        ValueCheck(ValueCheck.Keywords().with { $0.types = .string }).check(.number("42"), at: "/email", into: &problems)
        let plan = ContractRejection.plan(problems, operation: "POST /pets")
        #expect(plan.status == 400)
        #expect(String(decoding: plan.body, as: UTF8.self)
                == #"{"error":true,"reason":"POST /pets: the request does not match the API description (1 problem)","problems":["/email: expected a string, got 42"]}"#)
    }
}
