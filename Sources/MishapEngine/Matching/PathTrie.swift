/// The endpoints whose paths have `{parameters}` or a final `*`, as a tree of path segments:
/// a request's path is split once and walked down the tree, instead of being matched against
/// each pattern in turn. Which endpoints match, and in which order they are tried (declaration
/// order), is exactly what matching every pattern one by one gives.
struct PathTrie: Sendable {
    private struct Node: Sendable {
        /// The child for each literal segment (canonically equivalent segments share one).
        var literals: [Substring: Int] = [:]
        /// The ASCII literal segments' bytes with their child, sorted by bytes: an ASCII part
        /// is looked up here by binary search, where `literals` hashes and compares it the
        /// canonical way, a few hundred instructions a level even for ASCII.
        var asciiLiterals: [(bytes: [UInt8], child: Int)] = []
        /// Whether a literal segment is not ASCII: it may be canonically equivalent to an
        /// ASCII part (the Kelvin sign is "K"), so an ASCII part missing from `asciiLiterals`
        /// is looked up in `literals` too.
        var hasOtherLiterals = false
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
                    let child: Int
                    if let existing = nodes[node].literals[Substring(text)] {
                        child = existing
                    } else {
                        nodes.append(Node())
                        child = nodes.count - 1
                        nodes[node].literals[Substring(text)] = child
                    }
                    let bytes = Array(text.utf8)
                    if bytes.allSatisfy({ $0 < 0x80 }) {
                        nodes[node].asciiLiterals.append((bytes, child))
                    } else {
                        nodes[node].hasOtherLiterals = true
                    }
                    node = child
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
        // Sorted for the binary search, and each literal kept once (endpoints sharing a segment
        // added it once each; equal bytes always lead to the same child). Not deduplicated as
        // they were added: a node with thousands of literals made that quadratic.
        for node in nodes.indices where !nodes[node].asciiLiterals.isEmpty {
            var literals = nodes[node].asciiLiterals
            literals.sort { $0.bytes.lexicographicallyPrecedes($1.bytes) }
            var unique: [(bytes: [UInt8], child: Int)] = []
            unique.reserveCapacity(literals.count)
            for literal in literals where unique.last?.bytes != literal.bytes { unique.append(literal) }
            nodes[node].asciiLiterals = unique
        }
    }

    var isEmpty: Bool { endpoints.isEmpty }

    /// The endpoints whose paths match `path`, in declaration order, each with its captured
    /// parameters.
    func matches(_ path: String) -> [(endpoint: Endpoint, parameters: [Field])] {
        let found = find(path)
        return (0..<found.count).map { offset in
            let endpoint = endpoints[found[offset]]
            return (endpoint, parameters(of: endpoint, in: path))
        }
    }

    /// The endpoints (by index into `endpoints`) whose paths match `path`, in declaration order.
    ///
    /// An ASCII path (every request path a client percent-encodes) is walked over its bytes in
    /// place: each level finds its segment by scanning to the next `/`. Splitting it into
    /// `Substring`s first cost about 1,000 instructions a request in allocations, reference
    /// counts and index checks. Other paths are split and compared canonically.
    func find(_ path: String) -> Found {
        var path = path
        var found = Found()
        let walked: Bool = path.withUTF8 { bytes in
            guard Self.isASCII(bytes) else { return false }
            collect(0, bytes, Self.firstPart(bytes), into: &found)
            return true
        }
        if !walked { collect(0, PathPattern.parts(of: path), 0, into: &found) }
        found.sort()
        return found
    }

    /// The parameters of `path` for `endpoint`, one of those `find(path)` found (so its
    /// literal segments need no second comparison).
    func parameters(of endpoint: Endpoint, in path: String) -> [Field] {
        var path = path
        let captured: [Field]? = path.withUTF8 { bytes in
            guard Self.isASCII(bytes) else { return nil }
            return endpoint.path.captures(bytes, firstPart: Self.firstPart(bytes))
        }
        return captured ?? endpoint.path.captures(PathPattern.parts(of: path))
    }

    static let slash = UInt8(ascii: "/")

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        return high < 0x80
    }

    /// Where a path's first part starts: after its first `/` (nil when it has none, and so no parts).
    private static func firstPart(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        bytes.firstIndex(of: slash).map { $0 + 1 }
    }

    /// The part of a path's bytes starting at `start`: where it ends (the next `/`, or the end),
    /// and where the next part starts (nil after the last).
    static func part(of bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> (end: Int, next: Int?) {
        var end = start
        while end < bytes.count, bytes[end] != slash { end += 1 }
        return (end, end < bytes.count ? end + 1 : nil)
    }

    /// The endpoints found, by index: the first without allocating, as most paths find one.
    struct Found {
        private var first = -1
        private var more: [Int] = []

        var count: Int { first < 0 ? 0 : 1 + more.count }

        /// The index at `offset`, in declaration order once sorted.
        subscript(offset: Int) -> Int { offset == 0 ? first : more[offset - 1] }

        fileprivate mutating func add(_ indices: [Int]) {
            for index in indices {
                if first < 0 { first = index } else { more.append(index) }
            }
        }

        /// Into declaration order.
        fileprivate mutating func sort() {
            guard !more.isEmpty else { return }
            more.append(first)
            more.sort()
            first = more.removeFirst()
        }
    }

    /// `collect` over an ASCII path's bytes: `start` is where the segment of this level
    /// begins, nil past the last one.
    private func collect(_ node: Int, _ bytes: UnsafeBufferPointer<UInt8>, _ start: Int?, into found: inout Found) {
        if !nodes[node].rests.isEmpty { found.add(nodes[node].rests) }
        guard let start else {
            found.add(nodes[node].ends)
            return
        }
        let (end, next) = Self.part(of: bytes, from: start)
        if let child = asciiChild(node, UnsafeBufferPointer(rebasing: bytes[start..<end])) {
            collect(child, bytes, next, into: &found)
        }
        if let child = nodes[node].parameter, end > start { collect(child, bytes, next, into: &found) }
    }

    /// `collect` over a path that is not all ASCII, split into parts: each is looked up among a
    /// node's literals canonically, as `String` compares (an ASCII part of such a path too).
    private func collect(_ node: Int, _ parts: [Substring], _ depth: Int, into found: inout Found) {
        // Read in place: `let here = nodes[node]` copied the node (its table and lists) at every level.
        if !nodes[node].rests.isEmpty { found.add(nodes[node].rests) }
        guard depth < parts.count else {
            found.add(nodes[node].ends)
            return
        }
        let part = parts[depth]
        if let child = nodes[node].literals[part] { collect(child, parts, depth + 1, into: &found) }
        if let child = nodes[node].parameter, !part.isEmpty { collect(child, parts, depth + 1, into: &found) }
    }

    /// The child of `node` for the literal segment of these ASCII bytes, by binary search over
    /// the node's ASCII literals (and, should the node have others, canonically).
    private func asciiChild(_ node: Int, _ part: UnsafeBufferPointer<UInt8>) -> Int? {
        let found = nodes[node].asciiLiterals.withUnsafeBufferPointer { literals -> Int? in
            var low = 0, high = literals.count
            while low < high {
                let middle = (low + high) / 2
                let order = literals[middle].bytes.withUnsafeBufferPointer { Self.order($0, part) }
                if order == 0 { return literals[middle].child }
                if order < 0 { low = middle + 1 } else { high = middle }
            }
            return nil
        }
        if let found { return found }
        guard nodes[node].hasOtherLiterals else { return nil }
        return nodes[node].literals[Substring(String(decoding: part, as: UTF8.self))]
    }

    /// Byte order: negative when `a` sorts before `b`, 0 when equal, positive after (the order
    /// of `lexicographicallyPrecedes`, which sorted the literals).
    private static func order(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        for offset in 0..<min(a.count, b.count) where a[offset] != b[offset] {
            return a[offset] < b[offset] ? -1 : 1
        }
        return a.count - b.count
    }
}
