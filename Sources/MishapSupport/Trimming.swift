extension StringProtocol {
    /// The text without the ASCII whitespace at either end: spaces, tabs and line breaks
    /// (HTTP's optional whitespace around a header value or a list item, a line's CR LF).
    @inlinable public func trimmingASCIIWhitespace() -> SubSequence {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r\n" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
