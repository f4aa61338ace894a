import MishapEngine

extension FileCompiler {
    /// `ranges:` on a response with a body. Nil, after reporting, when it is wrong.
    /// Placeholder until ranges are written.
    mutating func compileRanges(_ node: YAMLNode, _ keyed: KeyedNodes) -> RangeSupport? {
        error("'ranges' is not supported yet", at: node)
        return nil
    }
}
