import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// A `when.body` field written as JSONPath (or jq) is read literally and can never hold: the
/// load warns at the field, saying how Mishap names nested fields; names a form may really have
/// (`user[email]`, `items[0]`) and plain dotted paths get no warning.
@Suite struct JSONPathFieldTests {
    static func warnings(_ field: String) throws -> [ScenarioDiagnostic] {
        try ScenarioLoader.load(yaml: """
            endpoint: POST /orders
            rules:
              - name: bulk
                when:
                  body:
                    "\(field)": "1"
                respond: { status: 201 }
              - name: rest
                respond: { status: 400 }
            """, name: "inline.yaml").warnings
    }

    @Test("The issue's filter, located at the field, with how nested fields are named")
    func aFilterIsReported() throws {
        let warnings = try Self.warnings("items[?(@.qty>1)]")
        #expect(warnings.count == 1, "\(warnings)")
        let warning = try #require(warnings.first)
        #expect((warning.file, warning.line, warning.column) == ("inline.yaml", 6, 9))
        #expect(warning.message.hasPrefix("warning: body field 'items[?(@.qty>1)]' looks like JSONPath (a filter '[?'), "
                                          + "but 'when' takes a field's name literally, so this test can never hold"), "\(warning.message)")
        #expect(warning.message.contains("items.0.qty"), "\(warning.message)")
    }

    @Test("Each JSONPath or jq form is reported; where there is a dotted equivalent, it is named",
          arguments: [
              ("$.items[0].qty", "the root '$'", "items.0.qty"),
              ("$['user']['email']", "the root '$'", "user.email"),
              ("items[*].qty", "a wildcard '*'", nil),
              ("items.*.qty", "a wildcard '*'", nil),
              ("..qty", "recursive descent '..'", nil),
              ("order..qty", "recursive descent '..'", nil),
              (".user.email", "a leading '.' (jq)", "user.email"),
              (".items[0]", "a leading '.' (jq)", "items.0"),
              ("user['email']", "a quoted name in brackets", "user.email"),
              ("items[?(@.qty > 1)].sku", "a filter '[?'", nil),
              ("@.qty", "the current item '@'", nil),
              ("$", "the root '$'", nil),
          ] as [(String, String, String?)])
    func eachFormIsReported(field: String, what: String, suggestion: String?) throws {
        let warnings = try Self.warnings(field)
        #expect(warnings.count == 1, "\(field): \(warnings)")
        let message = warnings.first?.message ?? ""
        #expect(message.contains("looks like JSONPath (\(what))"), "\(message)")
        if let suggestion {
            #expect(message.contains("write '\(suggestion)'"), "\(message)")
        } else {
            #expect(!message.contains("write '"), "\(message)")
        }
    }

    @Test("Plain and form field names get no warning",
          arguments: ["user.email", "items.0.qty", "user[email]", "items[0]", "items[]", "price$", "a.b-c_d", "cost[usd]", "e-mail@home"])
    func legitimateNamesAreQuiet(field: String) throws {
        #expect(try Self.warnings(field).isEmpty, "\(field)")
    }

    @Test("The field really never matches a JSON body it was written for (why it is reported)")
    func theFieldNeverMatches() throws {
        let set = try ScenarioLoader.load(yaml: """
            endpoint: POST /orders
            rules:
              - name: bulk
                when: { body: { 'items[?(@.qty>1)]': { present: true } } }
                respond: { status: 201 }
              - name: dotted
                when: { body: { items.0.qty: "2" } }
                respond: { status: 202 }
            """, name: "inline.yaml")
        let engine = set.makeEngine()
        let plan = engine.respond(to: Request(method: "POST", path: "/orders", headers: [Field("Content-Type", "application/json")],
                                              body: Array(#"{"items":[{"qty":2}]}"#.utf8)))
        #expect(plan.status == 202, "the JSONPath rule is passed over, the dotted one answers")
        #expect(set.warnings.map(\.line) == [4], "\(set.warnings)")
    }
}
