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
        let checked = try decode(root, version: version, path: path, fromYAML: !text.drop(while: \.isWhitespace).hasPrefix("{"))
        let info = checked["info"]?.object
        return OpenAPIDescription(root: checked, openAPIVersion: version,
                                  title: info?["title"]?.string ?? "API", version: info?["version"]?.string ?? "")
    }

    /// At most this many plain YAML numbers or booleans are read again as strings.
    static let maximumRetypedScalars = 50

    /// The description decoded by OpenAPIKit, to check it; what it refuses is refused here.
    ///
    /// YAML leaves a plain scalar's type to the reader: `version: 1.0` and `enum: ['443', 8443]`
    /// are strings to a YAML library decoding into `String`, numbers to the JSON that OpenAPIKit
    /// decodes here. So, for a YAML file, a number or boolean where OpenAPIKit wants a string
    /// is read again as the text it was written as (what YAML decoders do), and decoding is tried
    /// again. Returns the tree with those values as strings.
    private static func decode(_ root: JSONTree.Object, version: String, path: String, fromYAML: Bool) throws(ImportFailure) -> JSONTree.Object {
        var tree = JSONTree.object(root)
        for _ in 0...maximumRetypedScalars {
            let data = Data(tree.jsonText.utf8)
            let decoder = JSONDecoder()
            do {
                if version.hasPrefix("3.0") {
                    _ = try decoder.decode(OpenAPIKit30.OpenAPI.Document.self, from: data)
                } else if version.hasPrefix("3.1") {
                    _ = try decoder.decode(OpenAPIKit.OpenAPI.Document.self, from: data)
                } else {
                    throw ImportFailure("\(path): OpenAPI \(version) is not read: only 3.0 and 3.1 are")
                }
                return tree.object ?? root
            } catch let failure as ImportFailure {
                throw failure
            } catch {
                let problem = OpenAPIKit.OpenAPI.Error(from: error)
                let steps = problem.codingPath.map { key in key.intValue.map(JSONStep.index) ?? .key(key.stringValue) }
                if fromYAML, let retyped = retyped(tree, at: steps) {
                    tree = retyped
                    continue
                }
                throw ImportFailure("\(path): not a valid OpenAPI \(version) description: \(problem.localizedDescription)")
            }
        }
        throw ImportFailure("\(path): not a valid OpenAPI \(version) description: more than \(maximumRetypedScalars) numbers or booleans where strings belong")
    }

    /// `tree` with the number or boolean at `path` as a string, or nil when there is none there.
    private static func retyped(_ tree: JSONTree, at path: [JSONStep]) -> JSONTree? {
        var value = tree
        for step in path {
            switch (value, step) {
            case (.object(let object), .key(let key)):
                guard let next = object[key] else { return nil }
                value = next
            case (.array(let items), .index(let index)) where items.indices.contains(index):
                value = items[index]
            default:
                return nil
            }
        }
        if let text = scalarText(value, null: false) { return tree.replacing(at: path, with: .string(text)) }
        // A list of strings with a plain scalar among them (`type: [string, null]`): the
        // problem is reported at the list.
        guard case .array(let items) = value, items.contains(where: { scalarText($0, null: true) != nil }) else { return nil }
        return tree.replacing(at: path, with: .array(items.map { scalarText($0, null: true).map(JSONTree.string) ?? $0 }))
    }

    /// The text a plain scalar was written as, when it is a number, a boolean or (if `null`)
    /// null; nil for anything else.
    private static func scalarText(_ value: JSONTree, null: Bool) -> String? {
        switch value {
        case .number(let text): return text
        case .bool(let flag): return flag ? "true" : "false"
        case .null where null: return "null"
        default: return nil
        }
    }
}

