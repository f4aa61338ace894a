import Synchronization

/// The engine's endpoint paths as a 404 looks for close ones: each path folded to lower case,
/// in a table (the same path in another case, or with a slash more or less, is one lookup), and
/// grouped by length, each group sorted by its paths' bytes read forwards and read backwards (a
/// likely typo is within 3 bytes of the path's length, and leaves the path's start or its end
/// as it was, so it sorts beside the path it was meant to be in one order or the other). Built
/// on the first 404 an engine answers, once: matched requests never build or read it.
final class NearMissIndex: Sendable {
    /// The most candidate paths compared with a 404's path for a typo.
    static let maximumPathsCompared = 500
    /// Paths of one length compared all when there are at most this many; else only the
    /// `neighbours` on each side of where the 404's path sorts, forwards and backwards.
    static let smallGroup = 64
    static let neighbours = 8
    /// The longest path (in bytes) looked at for a typo: a typo is a slip in a short path.
    static let maximumTypoPathLength = 64
    /// The most edits a typo may be (and no more than a third of the candidate's length).
    static let maximumTypoEdits = 3

    /// The paths of one length (by endpoint index), sorted by their bytes forwards and backwards.
    private struct Group: Sendable {
        var forwards: [Int] = []
        var backwards: [Int] = []
    }

    private struct Table: Sendable {
        /// Each folded path, with the first endpoint (by index) that has it; the others with it
        /// follow in `nextWithPath` (-1 after the last), in declaration order.
        var firstWithPath: [String: Int] = [:]
        var nextWithPath: [Int] = []
        /// The paths of each length in bytes.
        var byLength: [Int: Group] = [:]
        /// Each endpoint's folded path, as bytes.
        var folded: [[UInt8]] = []

        /// The endpoints whose folded path is `path`, in declaration order.
        func endpoints(withPath path: String) -> [Int] {
            var found: [Int] = []
            var index = firstWithPath[path] ?? -1
            while index >= 0 {
                found.append(index)
                index = nextWithPath[index]
            }
            return found
        }
    }

    private let table = Mutex<Table?>(nil)

    /// The endpoints whose path is close to `path`, in declaration order, at most `limit`: the
    /// same path but for case or a final slash, and those of the likely typo.
    func closePaths(to path: String, in endpoints: [Endpoint], limit: Int) -> [Endpoint] {
        let table = self.table.withLock { table in
            if table == nil { table = Self.build(endpoints) }
            return table!
        }
        let folded = Self.fold(path)
        var found = table.endpoints(withPath: folded)
        found += table.endpoints(withPath: folded.hasSuffix("/") ? String(folded.dropLast()) : folded + "/")
        if let typo = Self.closestTypo(to: Array(folded.utf8), in: table) {
            found += table.endpoints(withPath: String(decoding: table.folded[typo], as: UTF8.self))
        }
        var seen = Set<Int>()
        return found.sorted().filter { seen.insert($0).inserted }.prefix(limit).map { endpoints[$0] }
    }

    /// The table of `endpoints`, made on the first 404 after a load (a few milliseconds for
    /// 10,000 endpoints: one folded copy of each path, and two sorts of each large group).
    private static func build(_ endpoints: [Endpoint]) -> Table {
        var table = Table()
        table.folded.reserveCapacity(endpoints.count)
        table.nextWithPath = Array(repeating: -1, count: endpoints.count)
        var lastWithPath: [String: Int] = [:]
        var lengths: [Int: [Int]] = [:]
        for (index, endpoint) in endpoints.enumerated() {
            let folded = fold(endpoint.path.description)
            if let last = lastWithPath.updateValue(index, forKey: folded) {
                table.nextWithPath[last] = index
            } else {
                table.firstWithPath[folded] = index
            }
            let bytes = Array(folded.utf8)
            lengths[bytes.count, default: []].append(index)
            table.folded.append(bytes)
        }
        let folded = table.folded
        for (length, indices) in lengths {
            var group = Group(forwards: indices, backwards: indices)
            if indices.count > smallGroup {
                group.forwards.sort { precedes(folded[$0], folded[$1], backwards: false) }
                group.backwards.sort { precedes(folded[$0], folded[$1], backwards: true) }
            }
            table.byLength[length] = group
        }
        return table
    }

    /// Whether `a` sorts before `b`, their bytes compared from the start or from the end.
    static func precedes(_ a: [UInt8], _ b: [UInt8], backwards: Bool) -> Bool {
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                let common = min(a.count, b.count)
                var offset = 0
                while offset < common {
                    let (x, y) = backwards ? (a[a.count - 1 - offset], b[b.count - 1 - offset]) : (a[offset], b[offset])
                    if x != y { return x < y }
                    offset += 1
                }
                return a.count < b.count
            }
        }
    }

    /// `path` in lower case: ASCII letters byte by byte, other text as `lowercased()` does.
    static func fold(_ path: String) -> String {
        var bytes = Array(path.utf8)
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return path.lowercased() }
        for index in bytes.indices where bytes[index] >= UInt8(ascii: "A") && bytes[index] <= UInt8(ascii: "Z") {
            bytes[index] += 0x20
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The endpoint (by index) whose folded path is fewest edits from `path` (the first declared
    /// among equals), within `maximumTypoEdits` and a third of its length; nil for none, or for
    /// a path longer than `maximumTypoPathLength`. Compared: paths within `maximumTypoEdits`
    /// bytes of its length, all of a small group, the neighbours of where it sorts in a large
    /// one; at most `maximumPathsCompared` in all.
    private static func closestTypo(to path: [UInt8], in table: Table) -> Int? {
        guard path.count <= maximumTypoPathLength else { return nil }
        var best: (distance: Int, index: Int)?
        var compared = 0
        var rows = EditRows(width: path.count + maximumTypoEdits + 1)
        func compare(_ index: Int, delta: Int) {
            guard compared < maximumPathsCompared else { return }
            compared += 1
            let candidate = table.folded[index]
            let allowed = min(max(1, min(maximumTypoEdits, candidate.count / 3)), best?.distance ?? maximumTypoEdits)
            guard delta <= allowed, let distance = rows.distance(path, candidate, atMost: allowed) else { return }
            if best == nil || (distance, index) < (best!.distance, best!.index) { best = (distance, index) }
        }
        for delta in 0...maximumTypoEdits {
            for length in delta == 0 ? [path.count] : [path.count - delta, path.count + delta] {
                guard let group = table.byLength[length] else { continue }
                if group.forwards.count <= smallGroup {
                    for index in group.forwards { compare(index, delta: delta) }
                    continue
                }
                for (order, backwards) in [(group.forwards, false), (group.backwards, true)] {
                    // Where the path sorts in `order`, and the neighbours on each side.
                    var (low, high) = (0, order.count)
                    while low < high {
                        let middle = (low + high) / 2
                        if precedes(table.folded[order[middle]], path, backwards: backwards) { low = middle + 1 } else { high = middle }
                    }
                    for position in max(0, low - neighbours)..<min(order.count, low + neighbours) { compare(order[position], delta: delta) }
                }
            }
        }
        return best?.index
    }
}

/// The rows of a banded edit distance (Levenshtein, with a swap of two neighbours as one
/// edit), kept across comparisons so none allocates.
struct EditRows {
    private var beforePrevious: [Int]
    private var previous: [Int]
    private var current: [Int]

    init(width: Int) {
        beforePrevious = Array(repeating: 0, count: width + 1)
        previous = beforePrevious
        current = beforePrevious
    }

    /// The distance between `a` and `b` when it is at most `limit`, else nil: only the cells
    /// within `limit` of the diagonal are computed, and a row whose every cell is over the
    /// limit ends the comparison.
    mutating func distance(_ a: [UInt8], _ b: [UInt8], atMost limit: Int) -> Int? {
        let (n, m) = (a.count, b.count)
        guard abs(n - m) <= limit else { return nil }
        if n == 0 || m == 0 { return max(n, m) }
        if current.count < m + 2 {
            beforePrevious = Array(repeating: 0, count: m + 2)
            previous = beforePrevious
            current = beforePrevious
        }
        let over = limit + 1
        for j in 0...(m + 1) { previous[j] = j <= limit ? j : over }
        for i in 1...n {
            let low = max(1, i - limit), high = min(m, i + limit)
            current[low - 1] = low == 1 ? min(i, over) : over
            var rowMinimum = current[low - 1]
            for j in low...high {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, beforePrevious[j - 2] + 1) }
                current[j] = min(value, over)
                rowMinimum = min(rowMinimum, current[j])
            }
            if high < m { current[high + 1] = over }
            if rowMinimum > limit { return nil }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[m] <= limit ? previous[m] : nil
    }
}
