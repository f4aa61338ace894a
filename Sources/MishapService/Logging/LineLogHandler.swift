import Logging
import MishapHTTP
import MishapSupport

/// A swift-log handler writing one line per message to a file descriptor (standard error by
/// default): readable text, or one JSON object per line for machines. Lines go through the
/// descriptor's `LogWriter`, whole and in order: request lines (`logRequest`, the service's fast
/// path) are written in batches by the writer's thread, every other line before `log` returns.
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
    /// Where the lines go, shared by every handler of the same descriptor.
    public let writer: LogWriter

    public init(label: String, level: Logger.Level, format: Format, descriptor: Int32 = 2) {
        self.label = label
        self.logLevel = level
        self.format = format
        self.writer = LogWriter.shared(descriptor: descriptor) { dropped in
            Self.droppedLine(dropped, format: format, label: label)
        }
    }

    /// Writes one request's line (at info) without swift-log's metadata dictionary: what the
    /// service calls per request when its logger's handler is this one and carries no metadata
    /// of its own. The line is the one `log` would write for the same metadata.
    public func logRequest(_ request: CompletedRequest) {
        let time = WallClock.nowMilliseconds()
        writer.enqueueTimestamped { out, timestamps in
            RequestLogLine.append(request, format: format, label: label, time: time, timestamps: &timestamps, to: &out)
        }
    }

    /// The line saying that request lines were dropped because the log's reader fell behind.
    static func droppedLine(_ count: Int, format: Format, label: String) -> [UInt8] {
        let time = WallClock.iso8601(milliseconds: WallClock.nowMilliseconds())
        let message = "\(count) request log line(s) dropped: the log's reader did not keep up"
        switch format {
        case .text:
            return Array("\(time) warning \(message) dropped=\(count)\n".utf8)
        case .json:
            let members: [(String, JSON)] = [("time", .string(time)), ("level", .string("warning")), ("label", .string(label)),
                                             ("message", .string(message)), ("dropped", .int(count))]
            return Array((JSON.object(members).text + "\n").utf8)
        }
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
            // Escaped (`TextLogEscaping`): a line break in a path or a name must not start a
            // line of its own.
            line = "\(time) \(event.level) " + TextLogEscaping.escaped("\(event.message)")
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
                let escaped = TextLogEscaping.escaped(text)
                line += " \(key)=" + (text.contains(" ") || text.isEmpty ? "\"\(escaped)\"" : escaped)
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
        writer.write(Array(line.utf8))
    }

    /// The metadata key of located problems: an array of `file`, `line`, `column`, `message`
    /// dictionaries, which JSON lines carry as objects and text lines as `file:line:column:
    /// message` lines after the message.
    public static let problemsKey = "problems"

    /// One located problem as text, escaped like the rest of the line: one line however the
    /// message reads.
    private static func problemLine(_ item: Logger.MetadataValue) -> String {
        guard case .dictionary(let fields) = item else { return "\(item)" }
        let file = fields["file"].map { "\($0)" } ?? "?"
        let line = fields["line"].map { "\($0)" } ?? "?"
        let column = fields["column"].map { "\($0)" } ?? "?"
        return TextLogEscaping.escaped("\(file):\(line):\(column): \(fields["message"].map { "\($0)" } ?? "")")
    }

    /// Request fields first, in reading order; any others after, by name.
    private static func order(_ key: String) -> (Int, String) {
        let first = ["method", "path", "status", "fault", "rule", "endpoint", "durationMs", "closedEarly", "bodyIncomplete"]
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
