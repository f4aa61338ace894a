import Foundation

/// A fresh, uniquely named folder under the system temporary folder, removed on deinit.
public final class TemporaryFolder: Sendable {
    /// The folder itself (not symlink-resolved: messages show paths as given).
    public let path: String

    /// Creates the folder.
    public init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("mishap-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `contents` to `relative` (intermediate folders created); returns the full path.
    /// The file is replaced whole (written aside, then renamed), as an editor saves; `inPlace`
    /// writes into the existing file instead, as a plain `>` redirection does.
    @discardableResult
    public func write(_ relative: String, _ contents: String, inPlace: Bool = false) throws -> String {
        try write(relative, Data(contents.utf8), inPlace: inPlace)
    }

    /// Writes `data` to `relative`, as `write(_:_:inPlace:)` writes text.
    @discardableResult
    public func write(_ relative: String, _ data: Data, inPlace: Bool = false) throws -> String {
        let full = path + "/" + relative
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: full), options: inPlace ? [] : .atomic)
        return full
    }

    /// Creates the folder `relative` (and those above it); returns its full path.
    @discardableResult
    public func makeFolder(_ relative: String) throws -> String {
        let full = path + "/" + relative
        try FileManager.default.createDirectory(atPath: full, withIntermediateDirectories: true)
        return full
    }

    /// Creates a symbolic link at `relative` pointing to `destination` (absolute or relative).
    public func symlink(_ relative: String, to destination: String) throws {
        try FileManager.default.createSymbolicLink(atPath: path + "/" + relative, withDestinationPath: destination)
    }
}
