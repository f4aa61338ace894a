/// A field list from the journal's JSON (`[["name", "value"], ...]`) as pairs.
public func pairs(_ value: Any?) -> [[String]] {
    (value as? [[Any]])?.map { $0.map { "\($0)" } } ?? []
}
