import MishapScenarios

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
