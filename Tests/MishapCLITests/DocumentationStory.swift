import Foundation
import Synchronization
import MishapTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The runnable blocks of a page that share a `story=NAME` (or one block alone), run in order in
/// one folder, as a reader following the page runs them.
///
/// The folder holds a copy of `scenarios/` and `docs/examples/` (the paths the pages name), a
/// home of its own (so `~/.local/share/mishap/tls` is the story's), and the built `mishap` first
/// on the `PATH`. Every port a block names (after `127.0.0.1:`, `localhost:`, `--port`,
/// `--tls-port`, or listed in `ports=`) stands for a free port picked for the story, 8080
/// always among them: a `mishap serve`, `start` or `record` without `--port` is given the one
/// 8080 stands for, as it would take 8080 itself, and output shows the page's numbers back.
/// `server` serves the default scenarios there before the first block. Servers a block starts
/// with a pid file in the folder are stopped after the last block.
struct DocumentationStory: Sendable, CustomTestStringConvertible {
    let blocks: [DocumentationBlock]

    var testDescription: String {
        blocks[0].description + (blocks[0].option("story").map { " (story \($0))" } ?? "")
    }

    /// Block kinds that run.
    static let runnableKinds: Set<String> = ["console", "sh", "python"]

    /// Whether `block` runs in a story: a runnable kind, or a file a story writes.
    static func runs(_ block: DocumentationBlock) -> Bool {
        guard let kind = block.kind else { return false }
        return runnableKinds.contains(kind) || (kind == "scenario" && block.option("file") != nil)
    }

    /// The stories of every page, in page order.
    static func all(_ pages: DocumentationPages) -> [DocumentationStory] {
        var stories: [DocumentationStory] = []
        var named: [String: Int] = [:]
        for block in pages.blocks where runs(block) {
            if let name = block.option("story") {
                let key = block.file + "#" + name
                if let index = named[key] {
                    stories[index] = DocumentationStory(blocks: stories[index].blocks + [block])
                    continue
                }
                named[key] = stories.count
            }
            stories.append(DocumentationStory(blocks: [block]))
        }
        return stories
    }

    /// The stories, read at test discovery (none when the pages cannot be read: the marker test
    /// fails then).
    static let discovered: [DocumentationStory] = (try? DocumentationPages.load()).map(all) ?? []

    /// The ports the page names, each with a free port that stands for it.
    func ports() throws -> [(page: String, real: String)] {
        var numbers: [String] = ["8080"]
        let pattern = #/(?:127\.0\.0\.1:|localhost:|--port[ =]|--tls-port[ =])([0-9]{4,5})/#
        for block in blocks {
            numbers += block.text.matches(of: pattern).map { String($0.1) }
            numbers += (block.option("ports") ?? "").split(separator: ",").map(String.init)
        }
        var seen: Set<String> = []
        return try numbers.filter { seen.insert($0).inserted }.map { number in
            (number, String(try #require(Self.freePort(), "no free port for \(number)")))
        }
    }

    /// A port nothing listens on now, below the kernel's ephemeral range (32768 and up here):
    /// a port bound to 0 and let go comes back as the next client's source port or another
    /// test's listening port while the story has not yet started its server on it (seen under
    /// the 1,000-client tests); ports from 20000 to 32000 are handed out by no one but this.
    /// Each is handed out once in this process: stories run side by side, and two of them given
    /// the same port before either had started its server met as "Address already in use".
    static func freePort() -> UInt16? {
        for _ in 0..<500 {
            let port = UInt16.random(in: 20000...32000)
            guard handedOut.withLock({ $0.insert(port).inserted }) else { continue }
            if canBind(port) { return port }
        }
        return nil
    }

    /// The ports `freePort` has handed out.
    private static let handedOut = Mutex<Set<UInt16>>([])

    /// Whether `port` on 127.0.0.1 can be bound now (the socket is closed again at once).
    static func canBind(_ port: UInt16) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let length = socklen_t(MemoryLayout<sockaddr_in>.size)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 }
        }
    }

    /// `text` with each whole number `from` written as its `to`.
    static func substitute(_ text: String, _ pairs: [(from: String, to: String)]) -> String {
        var text = text
        for (from, to) in pairs {
            text = text.replacingOccurrences(of: "(?<![0-9])\(from)(?![0-9])", with: to, options: .regularExpression)
        }
        return text
    }

    /// `line` with `--port PORT` added to a `mishap serve`, `start` or `record` that names none.
    static func givePort(_ line: String, _ port: String) -> String {
        guard !line.contains("--port"),
              let match = line.firstMatch(of: #/(^|[\s;&|(])mishap (serve|start|record)(?=\s|$)/#) else { return line }
        return line.replacingCharacters(in: match.range, with: match.output.0 + " --port " + port)
    }

    /// Whether `actual` is `expected`, where each `…` of `expected` stands for any text.
    static func matches(_ actual: String, _ expected: String) -> Bool {
        let pieces = expected.components(separatedBy: "…")
        guard pieces.count > 1 else { return actual == expected }
        guard actual.hasPrefix(pieces[0]), actual.hasSuffix(pieces[pieces.count - 1]),
              actual.count >= pieces[0].count + pieces[pieces.count - 1].count else { return false }
        var rest = actual.dropFirst(pieces[0].count).dropLast(pieces[pieces.count - 1].count)
        for piece in pieces.dropFirst().dropLast() {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        return true
    }

    /// A console block's commands (`$ ` lines), each with the lines shown after it.
    static func steps(_ text: String) -> [(command: String, output: [String])] {
        var steps: [(command: String, output: [String])] = []
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("$ ") {
                steps.append((String(line.dropFirst(2)), []))
            } else if !steps.isEmpty {
                steps[steps.count - 1].output.append(line)
            }
        }
        return steps
    }
}
