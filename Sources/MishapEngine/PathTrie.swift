/// The endpoints whose paths have `{parameters}` or a final `*`, as a tree of path segments:
/// a request's path is split once and walked down the tree, instead of being matched against
/// each pattern in turn. Which endpoints match, and in which order they are tried (declaration
/// order), is exactly what matching every pattern one by one gives.
struct PathTrie: Sendable {
    private struct Node: Sendable {
        /// The child for each literal segment.
        var literals: [Substring: Int] = [:]
        /// The child for a `{parameter}` segment (any non-empty segment).
        var parameter: Int?
        /// Endpoints (by their index in declaration order) whose path ends here.
        var ends: [Int] = []
        /// Endpoints whose path ends here with `*`, matching whatever follows, or nothing.
        var rests: [Int] = []
    }

    private var nodes: [Node] = [Node()]
    let endpoints: [Endpoint]

    init(_ endpoints: [Endpoint]) {
        self.endpoints = endpoints
        for (index, endpoint) in endpoints.enumerated() {
            var node = 0
            for segment in endpoint.path.segments {
                switch segment {
                case .literal(let text):
                    if let child = nodes[node].literals[Substring(text)] {
                        node = child
                    } else {
                        nodes.append(Node())
                        nodes[node].literals[Substring(text)] = nodes.count - 1
                        node = nodes.count - 1
                    }
                case .parameter:
                    if let child = nodes[node].parameter {
                        node = child
                    } else {
                        nodes.append(Node())
                        nodes[node].parameter = nodes.count - 1
                        node = nodes.count - 1
                    }
                case .rest:
                    nodes[node].rests.append(index)
                    node = -1
                }
                if node < 0 { break }
            }
            if node >= 0 { nodes[node].ends.append(index) }
        }
    }

    var isEmpty: Bool { endpoints.isEmpty }

    /// The endpoints whose paths match `path`, in declaration order, each with its captured
    /// parameters.
    func matches(_ path: String) -> [(endpoint: Endpoint, parameters: [Field])] {
        let parts = PathPattern.parts(of: path)
        var found: [Int] = []
        collect(0, parts, 0, into: &found)
        guard !found.isEmpty else { return [] }
        if found.count > 1 { found.sort() }
        return found.map { index in
            let endpoint = endpoints[index]
            return (endpoint, endpoint.path.match(parts: parts) ?? [])
        }
    }

    private func collect(_ node: Int, _ parts: [Substring], _ depth: Int, into found: inout [Int]) {
        // Read in place: `let here = nodes[node]` copied the node (its table and lists) at every level.
        if !nodes[node].rests.isEmpty { found += nodes[node].rests }
        guard depth < parts.count else {
            found += nodes[node].ends
            return
        }
        let part = parts[depth]
        if let child = nodes[node].literals[part] { collect(child, parts, depth + 1, into: &found) }
        if let child = nodes[node].parameter, !part.isEmpty { collect(child, parts, depth + 1, into: &found) }
    }
}
