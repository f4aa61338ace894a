import Foundation
@testable import MishapImport
import MishapScenarios
import MishapService
import MishapTestSupport
import Testing

/// What the Petstore fixtures' app decodes: a pet as an app would declare it, its optional
/// fields optional, its status an enum, its birth a `Date` read as ISO 8601.
struct Pet: Codable, Equatable {
    enum Status: String, Codable { case available, pending, sold }
    var id: Int
    var name: String
    var status: Status
    var tag: String?
    var born: Date?
}

/// A page of pets (`GET /pets` of the 3.0 fixture).
struct PetPage: Codable {
    var items: [Pet]
    var total: Int
}

/// An error body of the fixtures.
struct APIError: Codable {
    var code: Int
    var message: String
}

/// The fixtures beside this file, a folder to import into, and the decoder the app would use.
enum ImportFixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

    static func path(_ name: String) -> String { folder + "/" + name }

    /// The app's decoder: dates in ISO 8601, as the descriptions declare them.
    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// Imports `file` into a new folder inside `into`, checks that the scenario loader reads it
    /// without warnings, and returns the folder and the summary.
    static func imported(_ file: String, into temporary: TemporaryFolder, name: String = "imported") throws -> (folder: String, summary: ImportSummary) {
        let folder = temporary.path + "/" + name
        let summary = try OpenAPIImporter.importDescription(file: file, into: folder, overwrite: false)
        let loaded = try ScenarioLoader.load(directory: folder)
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        return (folder, summary)
    }

    /// The 3.0 YAML fixture as JSON text, made with the loader's reader.
    static func jsonText(ofYAML name: String) throws -> String {
        let text = try String(contentsOfFile: path(name), encoding: .utf8)
        return try #require(try YAMLDocumentReader.read(text, file: name)).jsonText
    }
}
