import Logging
import MishapSupport

/// A swift-log handler writing one line per message to a file descriptor (standard error by
/// default): readable text, or one JSON object per line for machines. Each line goes out in a
/// single `write`, so lines from different threads never interleave.
public struct LineLogHandler: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        /// `2026-11-21T09:30:12.345Z info GET /login 200 success method=POST ...`
        case text
        /// `{"time":"...","level":"info","label":"mishap","message":"...","method":"POST",...}`
        case json
    }

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public let label: String
    public let format: Format
    private let descriptor: Int32

    public init(label: String, level: Logger.Level, format: Format, descriptor: Int32 = 2) {
        self.label = label
        self.logLevel = level
        self.format = format
        self.descriptor = descriptor
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let time = WallClock.iso8601(milliseconds: WallClock.nowMilliseconds())
        var line: String
        switch format {
        case .text:
            line = "\(time) \(event.level) \(event.message)"
            // A request line's message is already "METHOD path": the rest follows as key=value.
            if case .string(let method)? = all["method"], case .string(let path)? = all["path"],
               "\(event.message)" == "\(method) \(path)" {
                all["method"] = nil
                all["path"] = nil
            }
            // Located problems read best one to a line, as `mishap validate` prints them.
            let problems = all.removeValue(forKey: Self.problemsKey)
            for (key, value) in all.sorted(by: { Self.order($0.key) < Self.order($1.key) }) {
                let text = "\(value)"
                line += " \(key)=" + (text.contains(" ") || text.isEmpty ? "\"\(text)\"" : text)
            }
            if case .array(let items)? = problems {
                for item in items { line += "\n" + Self.problemLine(item) }
            }
        case .json:
            var members: [(String, JSON)] = [
                ("time", .string(time)), ("level", .string(event.level.rawValue)),
                ("label", .string(label)), ("message", .string("\(event.message)")),
            ]
            for (key, value) in all.sorted(by: { Self.order($0.key) < Self.order($1.key) }) { members.append((key, Self.json(value))) }
            line = JSON.object(members).text
        }
        line += "\n"
        _ = FileDescriptor.writeAll(descriptor, line)
    }

    /// The metadata key of located problems: an array of `file`, `line`, `column`, `message`
    /// dictionaries, which JSON lines carry as objects and text lines as `file:line:column:
    /// message` lines after the message.
    public static let problemsKey = "problems"

    /// One located problem as text.
    private static func problemLine(_ item: Logger.MetadataValue) -> String {
        guard case .dictionary(let fields) = item else { return "\(item)" }
        let file = fields["file"].map { "\($0)" } ?? "?"
        let line = fields["line"].map { "\($0)" } ?? "?"
        let column = fields["column"].map { "\($0)" } ?? "?"
        return "\(file):\(line):\(column): \(fields["message"].map { "\($0)" } ?? "")"
    }

    /// Request fields first, in reading order; any others after, by name.
    private static func order(_ key: String) -> (Int, String) {
        let first = ["method", "path", "status", "fault", "rule", "endpoint", "durationMs", "closedEarly"]
        return (first.firstIndex(of: key) ?? first.count, key)
    }

    private static func json(_ value: Logger.MetadataValue) -> JSON {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let convertible):
            if let flag = convertible as? Bool {
                .bool(flag)
            } else if let number = convertible as? Int {
                .int(number)
            } else if let number = convertible as? Double {
                .double(number)
            } else {
                .string(convertible.description)
            }
        case .array(let items): .array(items.map(json))
        case .dictionary(let dictionary): .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, json($0.value)) })
        }
    }
}
