import Foundation
import MishapEngine
@testable import MishapService
import MishapTestSupport
import Testing

/// `GET /__mishap/openapi.json`, the OpenAPI description of the admin API, over real sockets:
/// served as the other admin reads are and under the same access rules, and describing exactly
/// the routes the admin API answers, with their methods (schemathesis checks the answers
/// themselves against it: `make api-check`).
@Suite(.onBlockingThreads) struct OpenAPIDescriptionTests {
    static let yaml = """
        endpoint: GET /hello
        rules:
          - { name: hello, respond: { text: hi } }
        """

    /// The description as the server sends it, parsed.
    static func description(_ harness: TestServer) async throws -> [String: Any] {
        let response = try await harness.send("GET", "/__mishap/openapi.json")
        #expect(response.status == 200, "\(response.text.prefix(300))")
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        return try #require(response.json, "not a JSON object: \(response.text.prefix(300))")
    }

    /// A JSON object of OpenAPI 3.1, with every admin path under `/__mishap/`; `HEAD` answers
    /// as `GET` without the body.
    @Test func servedAsJSON() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let description = try await Self.description(harness)
        #expect(description["openapi"] as? String == "3.1.0")
        let paths = try #require(description["paths"] as? [String: Any])
        #expect(!paths.isEmpty && paths.keys.allSatisfy { $0.hasPrefix(AdminAPI.prefix) }, "\(paths.keys.sorted())")
        let head = try await harness.send("HEAD", "/__mishap/openapi.json")
        #expect(head.status == 200)
        #expect(head.text.isEmpty)
        let post = try await harness.send("POST", "/__mishap/openapi.json")
        #expect(post.status == 405)
        #expect(post.header("Allow") == "GET, HEAD")
        let query = try await harness.send("GET", "/__mishap/openapi.json?v=1")
        #expect(query.status == 400, "\(query.text)")
    }

    /// Every route of the admin API's table is described, with exactly its methods, and the
    /// description has no other path: but those the API answers outside its table, removing
    /// a runtime rule (`rules/{id}`), a session's settings (`sessions/{id}`) and the dashboard's
    /// files (`ui/`, `ui/{file}`).
    @Test func describesEveryRouteAndNoOther() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let paths = try #require(try await Self.description(harness)["paths"] as? [String: [String: Any]])
        let operations = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        var described: [String: Set<String>] = [:]
        for (path, item) in paths {
            described[String(path.dropFirst(AdminAPI.prefix.count))] = Set(item.keys.filter(operations.contains).map { $0.uppercased() })
        }
        var answered = AdminAPI.routeMethods.mapValues(Set.init)
        #expect(answered.count >= 14, "\(answered.keys.sorted())")
        answered["rules/{id}"] = ["DELETE"]
        answered["sessions/{id}"] = ["GET", "POST", "DELETE"]
        answered["ui/"] = ["GET"]
        answered["ui/{file}"] = ["GET"]
        #expect(Set(described.keys) == Set(answered.keys),
                "described only: \(Set(described.keys).subtracting(answered.keys).sorted()); answered only: \(Set(answered.keys).subtracting(described.keys).sorted())")
        for (route, methods) in answered {
            #expect(described[route] == methods, "\(route): described \(described[route] ?? []), answered \(methods)")
        }
        // Each described path answers, as described: not with the 404 of a path the API lacks.
        for route in described.keys where !route.contains("{") {
            let method = described[route]!.contains("GET") ? "GET" : described[route]!.sorted().first!
            let answer = try await harness.send(method, AdminAPI.prefix + route)
            #expect(answer.status != 404 || route == "tls", "\(method) \(route): \(answer.status) \(answer.text.prefix(200))")
        }
    }

    /// Each route of the table is described with exactly the query parameters it takes (over
    /// all its methods: GET /__mishap/rules takes only 'session' of the three), so a parameter
    /// added to the API, or renamed, is described in the same change.
    @Test func describesEveryQueryParameter() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let description = try await Self.description(harness)
        let paths = try #require(description["paths"] as? [String: [String: Any]])
        let shared = try #require((description["components"] as? [String: Any])?["parameters"] as? [String: [String: Any]])
        /// A parameter object, its reference resolved.
        func resolved(_ parameter: [String: Any]) -> [String: Any]? {
            guard let reference = parameter["$ref"] as? String else { return parameter }
            return shared[String(reference.dropFirst("#/components/parameters/".count))]
        }
        for (route, parameters) in AdminAPI.routeParameters {
            let item = try #require(paths[AdminAPI.prefix + route], "\(route) is not described")
            var described: Set<String> = []
            for case let operation as [String: Any] in item.values {
                for case let parameter as [String: Any] in operation["parameters"] as? [Any] ?? [] {
                    let object = try #require(resolved(parameter), "\(route): \(parameter)")
                    if object["in"] as? String == "query", let name = object["name"] as? String { described.insert(name) }
                }
            }
            #expect(described == Set(parameters), "\(route): described \(described.sorted()), taken \(parameters.sorted())")
        }
    }

    /// The description is as private as the other admin calls: a Host that is not this
    /// machine's is refused, and with an admin token it must be presented.
    @Test func underTheAdminAccessRules() async throws {
        let harness = try TestServer(yaml: Self.yaml)
        let connection = try harness.connect()
        try connection.send(Array("GET /__mishap/openapi.json HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\n\r\n".utf8))
        let rebound = try connection.readResponse()
        #expect(rebound.status == 403, "\(rebound.text)")
        #expect(!rebound.text.contains("openapi"))

        let token = "t0ken"
        let guarded = try TestServer(yaml: Self.yaml, options: ServiceOptions(adminToken: token))
        let without = try await guarded.send("GET", "/__mishap/openapi.json")
        #expect(without.status == 401)
        #expect(!without.text.contains("openapi"))
        let with = try await guarded.send("GET", "/__mishap/openapi.json", headers: ["Authorization": "Bearer " + token])
        #expect(with.status == 200)
        #expect(with.json?["openapi"] as? String == "3.1.0")

        // The description names the token's two forms, as the API reads them.
        let schemes = try #require((with.json?["components"] as? [String: Any])?["securitySchemes"] as? [String: [String: Any]])
        #expect(schemes["adminToken"]?["scheme"] as? String == "bearer")
        #expect(schemes["adminTokenHeader"]?["in"] as? String == "header")
        #expect(schemes["adminTokenHeader"]?["name"] as? String == AdminAPI.tokenHeader)
        let viaHeader = try await guarded.send("GET", "/__mishap/openapi.json", headers: [AdminAPI.tokenHeader: token])
        #expect(viaHeader.status == 200)
    }
}
