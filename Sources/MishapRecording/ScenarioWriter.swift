import MishapEngine
import MishapSupport

/// Writes a recording into its folder: one scenario file per endpoint (`get_v1-orders.yaml`),
/// rendered by hand with every value double-quoted (`YAMLQuoting`), and bodies that are large
/// or not text in `files/` (a folder the loader never reads scenarios from). Every file is
/// replaced whole, through a temporary file and a rename, so a recording stopped at any moment
/// leaves files that load.
public struct ScenarioWriter: Sendable {
    /// The recording's folder.
    public let directory: String
    /// The upstream recorded, named in each file's heading comment.
    public let upstream: String

    /// The folder of body files, beside the scenario files.
    public static let bodyFolder = "files"
    /// The largest body written inline as `text:`; larger ones go to a body file.
    public static let textLimit = 4096
    /// The largest scenario file the loader reads (`YAMLLimits.maximumFileSize`).
    static let maximumFileSize = 16 * 1024 * 1024

    /// A writer into `directory`, naming `upstream` in its files.
    public init(directory: String, upstream: String) {
        self.directory = directory
        self.upstream = upstream
    }

    /// Why a write failed: the path and the reason.
    public struct WriteFailure: Error, Sendable, CustomStringConvertible {
        /// What could not be written, and why.
        public let description: String
    }

    /// How `bytes` are best written: nothing, inline text (valid UTF-8 of at most `textLimit`
    /// bytes, without `{{`, which `text:` reads as a placeholder, and without control
    /// characters other than tab and line breaks), or nil for a body file.
    public static func inlineBody(_ bytes: [UInt8]) -> RecordedRule.Body? {
        if bytes.isEmpty { return .empty }
        guard bytes.count <= textLimit, let text = String(validUTF8: bytes) else { return nil }
        guard !text.contains("{{") else { return nil }
        let control = text.unicodeScalars.contains { scalar in
            (scalar.value < 0x20 && scalar != "\t" && scalar != "\n" && scalar != "\r") || (0x7F...0x9F).contains(scalar.value)
        }
        return control ? nil : .text(text)
    }

    /// The scenario file of `endpoint`, as text.
    public func render(_ endpoint: RecordedEndpoint) -> String {
        let source = String(upstream.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
        var lines = [
            "# Recorded by mishap record from \(source).",
            "# First match wins: rules of your own (failures) go above the recorded ones.",
            "endpoint: " + YAMLQuoting.quoted(endpoint.declaration),
            "rules:",
        ]
        for rule in endpoint.rules {
            lines.append("  - name: " + YAMLQuoting.quoted(rule.name))
            lines += rule.query.whenLines(indent: 4)
            lines.append("    respond:")
            lines.append("      status: \(rule.status)")
            if !rule.headers.isEmpty {
                lines.append("      headers:")
                for field in rule.headers {
                    lines.append("        " + YAMLQuoting.quoted(field.name) + ": " + YAMLQuoting.quoted(field.value))
                }
            }
            switch rule.body {
            case .empty: break
            case .text(let text): lines.append("      text: " + YAMLQuoting.quoted(text))
            case .file(let path): lines.append("      file: " + YAMLQuoting.quoted(path))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes `endpoint`'s scenario file, replacing the one before; refused, with nothing
    /// written, when it would be larger than the loader reads.
    public func write(_ endpoint: RecordedEndpoint) throws(WriteFailure) {
        let text = render(endpoint)
        guard text.utf8.count <= Self.maximumFileSize else {
            throw WriteFailure(description: "\(endpoint.fileName) would be over the \(Self.maximumFileSize) bytes a scenario file may take")
        }
        try replace(directory + "/" + endpoint.fileName, with: Array(text.utf8))
    }

    /// Writes a body file at `path` (relative to the folder, `files/NAME`), making `files/`
    /// when it is missing. A `files` that is a symbolic link (planted in a shared folder) is
    /// refused: what it points to is outside the recording.
    public func writeBody(_ path: String, _ bytes: [UInt8]) throws(WriteFailure) {
        let folder = directory + "/" + Self.bodyFolder
        if FileSystem.isSymbolicLink(folder) {
            throw WriteFailure(description: "\(folder) is a symbolic link: body files are written only into a folder of the recording's own")
        }
        if let problem = FileSystem.makeFolders(directory + "/" + Self.bodyFolder) {
            throw WriteFailure(description: problem)
        }
        try replace(directory + "/" + path, with: bytes)
    }

    /// Replaces a file whole, or says why it could not.
    private func replace(_ path: String, with bytes: [UInt8]) throws(WriteFailure) {
        guard FileSystem.replaceContents(of: path, with: bytes) else {
            throw WriteFailure(description: "cannot write \(path): \(Platform.describeLastError())")
        }
    }
}
