import Foundation
import MishapEngine
import MishapScenarios
import MishapTestSupport
import Testing

/// `GET /isUserNameAvailable` of the default scenarios, one case per row of seed-server.md, asked
/// of the engine itself: which rule answers a name is the scenarios' choice, with no socket in
/// it. How a name reaches the engine from a request line (percent-decoding, `+` as a space) is
/// the server's part, tested over sockets in MishapHTTPTests' UserNameAvailabilityTests.
@Suite struct UserNameAvailabilityRowTests {
    /// A name (nil: no `userName` parameter), and the answer it must get.
    struct Row: Sendable, CustomTestStringConvertible {
        enum Answer: Sendable {
            case error(status: Int, reason: String)
            case available(Bool, userName: String)
        }

        let testDescription: String
        let query: [Field]
        let answer: Answer

        init(_ description: String, query: [Field], _ answer: Answer) {
            testDescription = description
            self.query = query
            self.answer = answer
        }

        init(name: String, _ answer: Answer) {
            self.init(name, query: [Field("userName", name)], answer)
        }
    }

    static let rows: [Row] = [
        // Row 1
        Row("No parameter", query: [], .error(status: 400, reason: "Username parameter missing")),
        Row("Another parameter alone counts as missing", query: [Field("name", "someone")],
            .error(status: 400, reason: "Username parameter missing")),
        // Row 2
        Row(name: "", .error(status: 400, reason: "Username must not be empty")),
        // Row 3: characters as Swift counts them. The family emoji is five scalars and 18 bytes.
    ] + ["a", "ab", "abc", "👨‍👩‍👧", "é", "👍🏽👍🏽👍🏽"].map { Row(name: $0, .error(status: 400, reason: "Username is too short.")) }
        + ["abcd", "jörg", "👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧"].map { Row(name: $0, .available(true, userName: $0)) }
        // Row 4
        + ["admin", "superuser"].map { Row(name: $0, .error(status: 400, reason: "Username is not valid: \($0).")) }
        // Row 5
        + [Row(name: "servererror", .error(status: 500, reason: "The database is corrupted"))]
        // Row 9
        + ["peterfriese", "johnnyappleseed", "page", "johndoe"].map { Row(name: $0, .available(false, userName: $0)) }
        // Row 10
        + ["someone", "Admin", "servererror2", "maintenance?", "peterfriese ", "john doe", "abcd\u{0}efg"]
        .map { Row(name: $0, .available(true, userName: $0)) }

    /// The default scenarios, loaded once.
    static let scenarios: ScenarioSet = {
        do {
            return try ScenarioLoader.load(directory: defaultScenariosDirectory)
        } catch {
            fatalError("the default scenarios do not load: \(error)")
        }
    }()

    @Test(arguments: rows)
    func rowIsAnsweredLikeTheSeedServer(_ row: Row) throws {
        let plan = Self.scenarios.makeEngine().respond(to: Request(method: "GET", path: "/isUserNameAvailable", query: row.query))
        #expect(plan.header("Content-Type") == "application/json; charset=utf-8")
        #expect(plan.header("Retry-After") == nil)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(plan.body)) as? [String: Any], "\(plan.text)")
        #expect(json.count == 2, "\(plan.text)")
        switch row.answer {
        case .error(let status, let reason):
            #expect(plan.status == status)
            #expect(json["error"] as? Bool == true)
            #expect(json["reason"] as? String == reason)
        case .available(let isAvailable, let userName):
            #expect(plan.status == 200)
            #expect(json["isAvailable"] as? Bool == isAvailable)
            #expect(json["userName"] as? String == userName)
        }
    }
}
