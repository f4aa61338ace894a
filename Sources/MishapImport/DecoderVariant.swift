import MishapScenarios

/// A success answer changed in one way that an app's decoder may not survive, named for what it
/// breaks. Made from the success body and its schema (`DecoderVariants`); each becomes a rule
/// that answers only when forced.
struct DecoderVariant {
    /// The rule's name: `missingRequiredField`, `nullNotNullable`...
    var name: String
    /// What was changed, for the comment above the rule: `the required field 'id' left out`.
    var change: String
    var body: Body

    /// The changed answer: JSON, or bytes that are not JSON any more.
    enum Body {
        case json(JSONTree)
        /// Text sent as `application/json` (JSON cut short).
        case jsonText(String)
        /// Bytes sent as `application/json` (a byte order mark before the JSON).
        case jsonBytes([UInt8])
    }
}

/// One step into a JSON value: a member of an object or an item of a list.
enum JSONStep: Equatable {
    case key(String)
    case index(Int)
}

extension JSONTree {
    /// The value with the one at `path` replaced by `replacement` (removed when it is nil).
    func replacing(at path: [JSONStep], with replacement: JSONTree?) -> JSONTree {
        guard let step = path.first else { return replacement ?? .null }
        let rest = Array(path.dropFirst())
        switch (self, step) {
        case (.object(var object), .key(let key)):
            if rest.isEmpty {
                object[key] = replacement
            } else if let inner = object[key] {
                object[key] = inner.replacing(at: rest, with: replacement)
            }
            return .object(object)
        case (.array(var items), .index(let index)) where items.indices.contains(index):
            if rest.isEmpty {
                if let replacement { items[index] = replacement } else { items.remove(at: index) }
            } else {
                items[index] = items[index].replacing(at: rest, with: replacement)
            }
            return .array(items)
        default:
            return self
        }
    }
}

/// A path as a reader sees it: `items[0].owner.name`; `the body` for the whole.
func describe(_ path: [JSONStep]) -> String {
    var text = ""
    for step in path {
        switch step {
        case .key(let key): text += text.isEmpty ? key : ".\(key)"
        case .index(let index): text += "[\(index)]"
        }
    }
    return text.isEmpty ? "the body" : text
}
