import Foundation
import MishapScenarios

/// Follows `$ref`s within the description (`#/components/schemas/Pet`, any JSON pointer into
/// it). A reference to another file or URL is not followed (the importer reads one file and
/// fetches nothing): it is reported and the part that needs it is skipped. A chain of
/// references that comes back to itself without ever reaching a value is an error of the
/// description, named with the chain.
struct ReferenceResolver {
    let root: JSONTree

    /// Why a reference could not be followed.
    enum Problem: Error, Equatable {
        case external(String)
        case missing(String)
        case cycle([String])
    }

    /// At most this many references in one chain (a chain that long is a cycle in all but name).
    static let maximumChain = 64

    /// `value` with its `$ref` chain followed to a value that is not a reference, and the last
    /// reference followed (nil when `value` was none).
    func resolve(_ value: JSONTree) throws(Problem) -> (value: JSONTree, reference: String?) {
        var current = value
        var chain: [String] = []
        while let reference = current["$ref"]?.string {
            if chain.contains(reference) || chain.count >= Self.maximumChain { throw .cycle(chain + [reference]) }
            chain.append(reference)
            current = try target(of: reference)
        }
        return (current, chain.last)
    }

    /// The value a reference names.
    func target(of reference: String) throws(Problem) -> JSONTree {
        guard reference.hasPrefix("#") else { throw .external(reference) }
        var pointer = reference.dropFirst()
        if pointer.hasPrefix("/") { pointer = pointer.dropFirst() }
        var current = root
        guard !pointer.isEmpty else { return current }
        for token in pointer.split(separator: "/", omittingEmptySubsequences: false) {
            let key = (String(token).removingPercentEncodingIfPossible)
                .replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if let object = current.object, let next = object[key] {
                current = next
            } else if let array = current.array, let index = Int(key), array.indices.contains(index) {
                current = array[index]
            } else {
                throw .missing(reference)
            }
        }
        return current
    }

    /// The last part of a reference: `NotFound` for `#/components/responses/NotFound`.
    static func name(of reference: String) -> String {
        String(reference.split(separator: "/").last ?? Substring(reference))
    }
}

extension String {
    /// The text with `%XX` escapes decoded, or as it is when they do not decode.
    var removingPercentEncodingIfPossible: String {
        guard contains("%") else { return self }
        return removingPercentEncoding ?? self
    }
}
