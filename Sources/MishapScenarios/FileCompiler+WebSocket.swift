import MishapEngine

extension FileCompiler {
    /// `websocket:`, a script for an upgraded connection. Nil, after reporting, when it is
    /// wrong. Placeholder until the script is written.
    mutating func compileWebSocket(_ node: YAMLNode, _ keyed: KeyedNodes) -> WebSocketScript? {
        error("'websocket' is not supported yet", at: node)
        return nil
    }
}
