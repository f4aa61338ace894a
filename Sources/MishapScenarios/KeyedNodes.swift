/// A mapping's recognised keys, in file order.
struct KeyedNodes {
    var pairs: [(name: String, key: YAMLNode, value: YAMLNode)] = []

    /// The value given for `name`, if any.
    subscript(_ name: String) -> YAMLNode? {
        pairs.first(where: { $0.name == name })?.value
    }

    /// The key node of `name`, to place a problem with the key itself.
    func key(_ name: String) -> YAMLNode? {
        pairs.first(where: { $0.name == name })?.key
    }
}
