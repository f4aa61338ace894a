/// Why an import could not be done, in words for the person running it: a file that cannot be
/// read, a description that is not OpenAPI 3 (with the place of its first problem), or an
/// output folder that would be overwritten. `mishap import` prints it and exits 1.
public struct ImportFailure: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
