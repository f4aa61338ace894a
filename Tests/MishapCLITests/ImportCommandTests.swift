import Foundation
import MishapTestSupport
import Testing

/// `mishap import openapi` run as a process: `mishap` hands the command to the `mishap-import`
/// executable beside it, whose output, help and exit status come back as its own; the folder it
/// writes validates and serves, and its rules are forced with `mishap force`.
@Suite("mishap import openapi", .onBlockingThreads)
struct ImportCommandTests {
    static let petstore = Paths.repository + "/Tests/MishapImportTests/Fixtures/petstore-3.0.yaml"

    @Test("Imports, validates, serves, and a declared error is forced with mishap force")
    func importValidateServeForce() async throws {
        let folder = try TemporaryFolder()
        let imported = try await runMishap(["import", "openapi", Self.petstore, "--out", "api"], currentDirectory: folder.path)
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.standardOutput.contains("Imported Petstore 1.0.0 (OpenAPI 3.0.3) from \(Self.petstore) into api:"), "\(imported.standardOutput)")
        #expect(imported.standardOutput.contains("TRACE /health: Mishap serves GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS"))
        let validated = try await runMishap(["validate", "--strict", "api"], currentDirectory: folder.path)
        #expect(validated.status == 0 && validated.standardOutput == "api: 6 file(s), 5 endpoint(s), 81 rule(s): valid\n", "\(validated)")

        let (server, url, port) = try await ChildProcess.serving(["serve", "--port", "0", "--scenarios", folder.path + "/api"])
        defer { server.kill() }
        #expect(DaemonTests.fetch(port, "/pets/1")?.status == 200)
        let forced = try await runMishap(["force", "GET /pets/{petId}", "notFound", "--times", "1", "--url", url])
        #expect(forced.status == 0, "\(forced)")
        let notFound = DaemonTests.fetch(port, "/pets/1")
        #expect(notFound?.status == 404 && notFound?.body == #"{"code":404,"message":"No such pet"}"#, "\(String(describing: notFound))")
        #expect(DaemonTests.fetch(port, "/pets/1")?.status == 200, "forced once, then gone")
        let variant = DaemonTests.fetch(port, "/pets/1", headers: ["X-Mishap-Rule: numberAsString"])
        #expect(variant?.body.hasPrefix(#"{"id":"1","#) == true, "\(String(describing: variant))")
    }

    @Test("A second import into the folder is refused; --overwrite replaces it")
    func secondImport() async throws {
        let folder = try TemporaryFolder()
        #expect(try await runMishap(["import", "openapi", Self.petstore, "--out", "api"], currentDirectory: folder.path).status == 0)
        let again = try await runMishap(["import", "openapi", Self.petstore, "--out", "api"], currentDirectory: folder.path)
        #expect(again.status == 1 && again.standardOutput.isEmpty, "\(again)")
        #expect(again.standardError.hasPrefix("mishap import openapi: api: the folder is not empty"), "\(again.standardError)")
        let overwritten = try await runMishap(["import", "openapi", Self.petstore, "--out", "api", "--overwrite"], currentDirectory: folder.path)
        #expect(overwritten.status == 0, "\(overwritten)")
    }

    @Test("Bad input is a clear error and exit status 1")
    func badInput() async throws {
        let folder = try TemporaryFolder()
        try folder.write("swagger.json", #"{"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {}}"#)
        let swagger = try await runMishap(["import", "openapi", "swagger.json", "--out", "api"], currentDirectory: folder.path)
        #expect(swagger.status == 1, "\(swagger)")
        #expect(swagger.standardError.hasPrefix("mishap import openapi: swagger.json: Swagger 2.0 (OpenAPI 2) is not read"), "\(swagger.standardError)")
        let missing = try await runMishap(["import", "openapi", "nope.yaml", "--out", "api"], currentDirectory: folder.path)
        #expect(missing.status == 1 && missing.standardError == "mishap import openapi: nope.yaml: cannot read it: No such file or directory\n", "\(missing)")
        let noOut = try await runMishap(["import", "openapi", "swagger.json"], currentDirectory: folder.path)
        #expect(noOut.status == 64 && noOut.standardError.contains("Missing expected argument '--out <dir>'"), "\(noOut)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/api"))
    }

    @Test("Help: the importer's own, and the command listed by mishap --help")
    func help() async throws {
        let help = try await runMishap(["import", "openapi", "--help"])
        #expect(help.status == 0, "\(help)")
        #expect(help.standardOutput.contains("USAGE: mishap import openapi <file> --out <dir> [--overwrite]"), "\(help.standardOutput)")
        let root = try await runMishap(["--help"])
        #expect(root.standardOutput.contains("  import "), "\(root.standardOutput)")
    }

    @Test("Without mishap-import beside it, mishap import says where it looked")
    func missingImporter() async throws {
        let folder = try TemporaryFolder()
        let binary = try #require(Paths.mishap)
        // Copied by `cp`, in a process of its own: a copy written here holds a descriptor open
        // for writing that a child started meanwhile by another test inherits until its exec,
        // and running the copy then failed with "Text file busy".
        let copied = try spawnAndWait(["cp", binary, folder.path + "/mishap"], standardOutput: "/dev/null", standardError: "/dev/null")
        #expect(copied == 0)
        let result = try await run(folder.path + "/mishap", ["import", "openapi", Self.petstore, "--out", folder.path + "/api"])
        #expect(result.status == 1, "\(result)")
        let real = try #require(URL(fileURLWithPath: folder.path).resolvingSymlinksInPath().path as String?)
        #expect(result.standardError.hasPrefix("mishap import: \(real)/mishap-import is missing"), "\(result.standardError)")
    }
}
