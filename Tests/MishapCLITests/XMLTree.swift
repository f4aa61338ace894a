import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An XML document read with `XMLParser` into plain values, for the tests that read the JUnit
/// files back. Not `XMLDocument`: its nodes and libxml2's tree leak (LeakSanitizer reports them
/// in the address-sanitized run), and a JUnit reader in CI reads the file as a stream too.
struct XMLTree {
    /// One element: its name, attributes, child elements in order, and its text.
    final class Element {
        let name: String
        let attributes: [String: String]
        var children: [Element] = []
        var text = ""

        init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }

        /// The child elements called `name`.
        func elements(_ name: String) -> [Element] { children.filter { $0.name == name } }

        /// This element and every element under it called `name`, in document order.
        func descendants(_ name: String) -> [Element] {
            (self.name == name ? [self] : []) + children.flatMap { $0.descendants(name) }
        }
    }

    let root: Element

    /// Reads the file at `path`; throws the parser's error for a document that is not well formed.
    init(contentsOfFile path: String) throws {
        let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        let builder = Builder()
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            throw parser.parserError ?? CocoaError(.fileReadCorruptFile)
        }
        self.root = root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: Element?
        var open: [Element] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let element = Element(name: name, attributes: attributes)
            if let parent = open.last { parent.children.append(element) } else { root = element }
            open.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            _ = open.popLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            open.last?.text += string
        }
    }
}
