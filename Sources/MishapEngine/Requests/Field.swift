/// A name and a value, as in a query parameter, a form field or an HTTP header.
public struct Field: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
