import Foundation
import MishapImport
import MishapScenarios
import MishapTestSupport
import Testing

/// Importing again into the same folder: refused without `--overwrite`; with it, the generated
/// files are replaced (and those no longer made removed) and the user's own files are kept.
@Suite("Importing into a folder that has files")
struct OverwriteTests {
    @Test("A second import is refused, with nothing changed")
    func refusedWithoutOverwrite() throws {
        let temporary = try TemporaryFolder()
        let (folder, _) = try ImportFixtures.imported(ImportFixtures.path("petstore-3.0.yaml"), into: temporary)
        let before = try String(contentsOfFile: folder + "/pets.yaml", encoding: .utf8)
        do {
            _ = try OpenAPIImporter.importDescription(file: ImportFixtures.path("petstore-3.1.json"), into: folder, overwrite: false)
            Issue.record("imported into a folder that has files")
        } catch {
            #expect(error.description.hasPrefix("\(folder): the folder is not empty; import into a new or empty folder, or pass --overwrite"))
        }
        #expect(try String(contentsOfFile: folder + "/pets.yaml", encoding: .utf8) == before)
    }

    @Test("--overwrite replaces generated files, removes the ones not made again, keeps the user's")
    func overwriteKeepsOwnFiles() throws {
        let temporary = try TemporaryFolder()
        let (folder, _) = try ImportFixtures.imported(ImportFixtures.path("petstore-3.0.yaml"), into: temporary)
        // The user's own file, and a generated file whose header line was removed to keep edits.
        try temporary.write("imported/my-orders.yaml", "endpoint: GET /orders\nrules:\n  - { name: ok, respond: { json: [] } }\n")
        let edited = try String(contentsOfFile: folder + "/pets_petId.yaml", encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
            .replacingOccurrences(of: "\"No such pet\"", with: "\"No such pet, edited\"")
        try temporary.write("imported/pets_petId.yaml", edited)

        let summary = try OpenAPIImporter.importDescription(file: ImportFixtures.path("petstore-3.1.json"), into: folder, overwrite: true)
        #expect(summary.kept == ["pets_petId.yaml"])
        #expect(summary.removed == ["health.yaml", "transport-failures/health.yaml"])
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(files == ["my-orders.yaml", "pets.yaml", "pets_petId.yaml", "transport-failures"])
        #expect(try String(contentsOfFile: folder + "/pets_petId.yaml", encoding: .utf8) == edited)
        #expect(try String(contentsOfFile: folder + "/pets.yaml", encoding: .utf8).contains("(Petstore 3.1 2.0.0, OpenAPI 3.1.0)"))
        let loaded = try ScenarioLoader.load(directory: folder)
        #expect(loaded.endpoints.map(\.name).sorted() == ["DELETE /pets/{petId}", "GET /orders", "GET /pets", "GET /pets/{petId}"])
    }
}
