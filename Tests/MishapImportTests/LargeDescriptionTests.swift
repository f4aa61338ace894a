import Foundation
import MishapImport
import MishapService
import MishapTestSupport
import Testing

/// An item of the large description, as an app would decode it.
struct LargeItem: Codable {
    enum Kind: String, Codable { case small, large }
    var id: Int
    var createdAt: Date
    var name: String
    var kind: Kind
    var note: String?
    var tags: [String]
}

/// A large description made by the test (hundreds of operations, `$ref` chains ten deep,
/// `allOf`, `oneOf`, nullable fields, a schema that contains itself), imported, served, and asked
/// for a sample of its operations.
@Suite("Importing a large description", .onBlockingThreads)
struct LargeDescriptionTests {
    static let resources = 60
    static let levels = 10

    @Test("240 operations import, load without warnings, and a sample answers as declared")
    func largeDescription() async throws {
        let temporary = try TemporaryFolder()
        let file = try temporary.write("large.json", LargeDescription.json(resources: Self.resources, levels: Self.levels))
        let (folder, summary) = try ImportFixtures.imported(file, into: temporary)
        #expect(summary.endpoints == 4 * Self.resources)
        #expect(summary.files == 4 * Self.resources)
        #expect(summary.skipped.isEmpty, "\(summary.skipped)")

        let server = try TestServer(directory: folder)
        let decoder = ImportFixtures.decoder
        for index in stride(from: 0, to: Self.resources, by: 17) {
            let one = try await server.send("GET", "/resources\(index)/5")
            #expect(one.status == 200)
            let item = try decoder.decode(LargeItem.self, from: one.body)
            #expect(item.name == "item \(index)" && item.kind == .small && item.tags == ["string"])
            // The $ref chain, followed all the way down; the pet, the first branch of oneOf;
            // the tree that contains itself, stopped where it would repeat.
            let object = try #require(try JSONSerialization.jsonObject(with: one.body) as? [String: Any])
            var level = object["level"] as? [String: Any]
            var depth = 0
            while let next = level?["next"] as? [String: Any] {
                depth += 1
                level = next
            }
            #expect(depth == Self.levels - 1 && level?["depth"] as? Int == Self.levels - 1)
            #expect(object["pet"] as? [String: Bool] == ["meows": true])
            let tree = try #require(object["tree"] as? [String: Any])
            #expect(tree["label"] as? String == "string" && (tree["children"] as? [Any])?.isEmpty == true)

            let list = try await server.send("GET", "/resources\(index)")
            #expect(try decoder.decode([LargeItem].self, from: list.body).count == 1)
            for (method, path, rule, status) in [("GET", "/resources\(index)/5", "notFound", 404), ("PUT", "/resources\(index)/5", "status422", 422),
                                                 ("DELETE", "/resources\(index)/5", "status404", 404), ("GET", "/resources\(index)", "internalServerError", 500)] {
                let answer = try await server.send(method, path, headers: ["X-Mishap-Rule": rule])
                #expect(answer.status == status, "\(method) \(path) \(rule)")
                #expect((try JSONSerialization.jsonObject(with: answer.body) as? [String: String]) == ["message": "string"])
            }
            let deleted = try await server.send("DELETE", "/resources\(index)/5")
            #expect(deleted.status == 204)
            try await PetstoreImportTests.checkVariants(server, "/resources\(index)/5", LargeItem.self, expectedFailures: [
                "missingRequiredField", "nullNotNullable", "numberAsString", "unknownEnumValue", "otherDateFormat", "truncatedJSON",
            ], accepted: ["extraField", "byteOrderMark", "emptyArray", "longArray"], absent: [])
            try await PetstoreImportTests.checkVariants(server, "/resources\(index)", [LargeItem].self, expectedFailures: [
                "missingRequiredField", "nullNotNullable", "numberAsString", "unknownEnumValue", "otherDateFormat", "truncatedJSON",
            ], accepted: ["extraField", "byteOrderMark", "emptyArray", "longArray"], absent: [])
            let long = try await server.send("GET", "/resources\(index)", headers: ["X-Mishap-Rule": "longArray"])
            let items = try decoder.decode([LargeItem].self, from: long.body)
            #expect(items.count >= 100 && long.body.count <= 300 * 1024, "\(items.count) items, \(long.body.count) bytes")
        }
    }
}
