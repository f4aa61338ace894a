/// "Did you mean" for misspelt keys and names.
public enum Suggestion {
    /// The closest candidate to `word`, when it is close enough to be a likely typo.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        // A likely typo is short, and within 3 edits, so within 3 characters of the candidate's
        // length; anything else would cost a full comparison for nothing.
        guard word.utf8.count <= 64 else { return nil }
        let lowered = word.lowercased()
        var best: (String, Int)?
        for candidate in candidates where abs(candidate.count - lowered.count) <= 3 {
            let distance = editDistance(Array(lowered), Array(candidate.lowercased()))
            if distance < (best?.1 ?? Int.max) { best = (candidate, distance) }
        }
        guard let (candidate, distance) = best else { return nil }
        return distance <= max(1, min(3, candidate.count / 3)) ? candidate : nil
    }

    /// Appends ` (did you mean 'x'?)` when there is a close candidate.
    public static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Levenshtein distance, counting a swap of two neighbours as one edit.
    public static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previousPrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previousPrevious[j - 2] + 1)
                }
            }
            (previousPrevious, previous, current) = (previous, current, previousPrevious)
        }
        return previous[b.count]
    }
}
