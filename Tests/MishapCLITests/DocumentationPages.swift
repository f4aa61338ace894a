import Foundation
import MishapTestSupport

/// The pages a reader copies from: README.md and every `docs/*.md`, read once, with their fenced
/// code blocks, the `<!-- check: ... -->` marker before each, their headings' anchors and their
/// links.
///
/// Every fenced block with a language must say how a test checks it, on the line right before
/// its opening fence (`text` blocks, output and illustrations, need no marker):
///
/// - `check: scenario` (YAML): a whole scenario file; `mishap validate --strict` loads it alone,
///   or beside a copy of the default scenarios with `with-defaults`; `in=PATH` also asks that it
///   be, word for word, part of that file of the repository.
/// - `check: fragment rule|when` (YAML): part of a file, validated inside a file made around it.
/// - `check: console`: its `$ ` lines run with bash, and print what follows them, exactly (`…`
///   stands for any text within a line).
/// - `check: sh`: run with bash -e, to exit 0.
/// - `check: python`: run with python3, to exit 0, every `test_*` function it defines called.
/// - `check: swift in PATH`: word for word (indentation aside) in that file, which a test target
///   compiles and runs.
/// - `check: manifest`: a part of a `Package.swift`, evaluated by `swift package dump-package`.
/// - `check: json`: parses as JSON.
/// - `check: syntax (REASON)`: a shell block that cannot run in a test (it installs packages,
///   needs Docker, a Mac, or is `make test` itself): bash parses it, and every `mishap` command
///   and `make` target it names exists. The reason is required.
/// - `check: example NAME`: read by a test of its own, which names it (`"NAME"`).
///
/// Runnable blocks (`console`, `sh`, `python`, and YAML with `file=PATH`) may share a `story=NAME`:
/// the blocks of a page's story run in order in one folder, as a reader following the page
/// would run them (`DocumentationStory`).
struct DocumentationPages {
    /// One page: its path from the repository's root, and its lines.
    struct Page {
        let path: String
        let lines: [String]
    }

    let pages: [Page]

    /// README.md, then the `docs/*.md` pages in name order.
    static func load() throws -> DocumentationPages {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Paths.repository + "/docs")
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        return DocumentationPages(pages: try (["README.md"] + docs).map { path in
            let text = try String(contentsOfFile: Paths.repository + "/" + path, encoding: .utf8)
            return Page(path: path, lines: text.components(separatedBy: "\n"))
        })
    }

    /// The page at `path`, if it is one of them.
    func page(_ path: String) -> Page? { pages.first { $0.path == path } }

    /// Every fenced code block of every page.
    var blocks: [DocumentationBlock] { pages.flatMap(\.blocks) }
}

/// A fenced code block, where it is, and how it is checked.
struct DocumentationBlock: Sendable, CustomStringConvertible {
    /// The page, from the repository's root.
    let file: String
    /// The line of its opening fence, from 1.
    let line: Int
    /// The fence's language (`yaml`, `sh`, ...; empty when it has none).
    let language: String
    /// The marker's words after `check:` (nil without a marker).
    let marker: [String]?
    /// The reason in parentheses of a `syntax` marker.
    let reason: String?
    /// Its lines, without the fences and without the fence's own indentation.
    let text: String

    var description: String { "\(file):\(line)" }

    /// The marker's kind: `scenario`, `console`, ...
    var kind: String? { marker?.first }

    /// The value of `name=value` among the marker's words.
    func option(_ name: String) -> String? {
        marker?.dropFirst().first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
    }

    /// Whether the marker has the bare word `name`.
    func has(_ name: String) -> Bool { marker?.dropFirst().contains(name) ?? false }

    /// The languages whose blocks are copied by readers, so must carry a marker.
    static let checkedLanguages: Set<String> = ["bash", "sh", "shell", "console", "yaml", "yml", "python", "swift", "json", "nginx"]
}

extension DocumentationPages.Page {
    /// The fenced blocks of the page, each with the marker on the line before its fence.
    var blocks: [DocumentationBlock] {
        var blocks: [DocumentationBlock] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("```") else {
                index += 1
                continue
            }
            let indent = line.count - trimmed.count
            let language = String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces)
            var body: [String] = []
            var end = index + 1
            while end < lines.count, !lines[end].drop(while: { $0 == " " }).hasPrefix("```") {
                body.append(String(lines[end].dropFirst(min(indent, lines[end].prefix { $0 == " " }.count))))
                end += 1
            }
            let (marker, reason) = index > 0 ? Self.marker(lines[index - 1]) : (nil, nil)
            blocks.append(DocumentationBlock(file: path, line: index + 1, language: language, marker: marker, reason: reason,
                                             text: body.joined(separator: "\n")))
            index = end + 1
        }
        return blocks
    }

    /// The words of `<!-- check: WORDS -->`, and a `(reason)` at their end.
    static func marker(_ line: String) -> ([String]?, String?) {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("<!-- check:"), trimmed.hasSuffix("-->") else { return (nil, nil) }
        var inside = String(trimmed.dropFirst("<!-- check:".count).dropLast(3)).trimmingCharacters(in: .whitespaces)
        var reason: String?
        if let open = inside.firstIndex(of: "("), inside.hasSuffix(")") {
            reason = String(inside[inside.index(after: open)..<inside.index(before: inside.endIndex)])
            inside = String(inside[..<open])
        }
        return (inside.split(separator: " ").map(String.init), reason)
    }

    /// The lines outside fenced blocks, with their numbers from 1.
    var prose: [(number: Int, text: String)] {
        var inFence = false
        var result: [(number: Int, text: String)] = []
        for (index, line) in lines.enumerated() {
            if line.drop(while: { $0 == " " }).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if !inFence { result.append((index + 1, line)) }
        }
        return result
    }

    /// The anchors of its headings, as GitHub makes them: lower case, every character but
    /// letters, digits, spaces, `-` and `_` left out, spaces made `-`; a repeated one gets `-1`,
    /// `-2`, ...
    var anchors: Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        for (_, line) in prose where line.hasPrefix("#") {
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = String(title.lowercased().unicodeScalars.compactMap { scalar -> Character? in
                if scalar == " " { return "-" }
                if scalar == "-" || scalar == "_" || CharacterSet.alphanumerics.contains(scalar) { return Character(scalar) }
                return nil
            })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// The targets of its links and images, outside code, with their line numbers.
    var links: [(line: Int, target: String)] {
        var result: [(line: Int, target: String)] = []
        for (number, line) in prose {
            // Inline code is not a link: `[a](b)` there is an example.
            let parts = line.components(separatedBy: "`")
            let outsideCode = parts.enumerated().filter { $0.offset % 2 == 0 }.map(\.element).joined(separator: " ")
            let pattern = #/\]\(([^)\s]+)\)/#
            for match in outsideCode.matches(of: pattern) { result.append((number, String(match.1))) }
        }
        return result
    }
}
