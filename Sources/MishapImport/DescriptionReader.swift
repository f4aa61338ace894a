import Foundation
import MishapScenarios
import MishapSupport
import OpenAPIKit
import OpenAPIKit30

/// An OpenAPI description read and checked: OpenAPIKit decodes it (3.0 with `OpenAPIKit30`, 3.1
/// with `OpenAPIKit`), so a description it refuses is refused here with its words and the path
/// of the problem; what the importer walks is the document as written (`root`), members in
/// their order, so that the files it writes follow the description.
struct OpenAPIDescription {
    var root: JSONTree.Object
    /// `3.0.3`, `3.1.0`...
    var openAPIVersion: String
    var title: String
    var version: String
}

/// Reads a description file: bounded, YAML or JSON through the scenario loader's reader (one
/// libyaml in the program, located syntax errors), then decoded by OpenAPIKit.
enum DescriptionReader {
    /// The largest description read. Large public descriptions are a few MiB; the YAML reader
    /// reads at most 16 MiB.
    static let maximumSize = 16 * 1024 * 1024

    /// The description in the file at `path`, or why it cannot be imported.
    static func read(_ path: String) throws(ImportFailure) -> OpenAPIDescription {
        let bytes: [UInt8]
        switch FileSystem.readRegularFile(path, limit: maximumSize) {
        case .success(let read): bytes = read
        case .failure(.unreadable(let reason)): throw ImportFailure("\(path): cannot read it: \(reason)")
        case .failure(.notRegular): throw ImportFailure("\(path): not a regular file")
        case .failure(.tooLarge(let size)):
            throw ImportFailure("\(path): the file is \(size) bytes; a description may be at most \(maximumSize / (1024 * 1024)) MiB (\(maximumSize) bytes)")
        }
        guard var text = String(validating: bytes, as: UTF8.self) else {
            throw ImportFailure("\(path): not UTF-8 text")
        }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let tree: JSONTree?
        do {
            tree = try YAMLDocumentReader.read(text, file: path)
        } catch {
            throw ImportFailure(error.diagnostic.description)
        }
        guard let root = tree?.object else {
            throw ImportFailure("\(path):1:1: not an OpenAPI description: expected a mapping with an 'openapi' key")
        }
        if let swagger = root["swagger"] {
            let version = swagger.string ?? swagger.jsonText
            throw ImportFailure("\(path): Swagger \(version) (OpenAPI 2) is not read: only OpenAPI 3.0 and 3.1 are; "
                + "convert it to OpenAPI 3 first (swagger2openapi, or the Swagger Editor's Convert to OpenAPI 3)")
        }
        guard let version = root["openapi"]?.string else {
            throw ImportFailure("\(path):1:1: not an OpenAPI description: no 'openapi' key (expected openapi: 3.0.x or 3.1.x)")
        }
        let data = Data(JSONTree.object(root).jsonText.utf8)
        let decoder = JSONDecoder()
        do {
            if version.hasPrefix("3.0") {
                _ = try decoder.decode(OpenAPIKit30.OpenAPI.Document.self, from: data)
            } else if version.hasPrefix("3.1") {
                _ = try decoder.decode(OpenAPIKit.OpenAPI.Document.self, from: data)
            } else {
                throw ImportFailure("\(path): OpenAPI \(version) is not read: only 3.0 and 3.1 are")
            }
        } catch let failure as ImportFailure {
            throw failure
        } catch {
            let reason = OpenAPIKit.OpenAPI.Error(from: error).localizedDescription
            throw ImportFailure("\(path): not a valid OpenAPI \(version) description: \(reason)")
        }
        let info = root["info"]?.object
        return OpenAPIDescription(root: root, openAPIVersion: version,
                                  title: info?["title"]?.string ?? "API", version: info?["version"]?.string ?? "")
    }
}
