import MishapEngine
import MishapUpstream

/// Which of an upstream's answer headers a recording keeps: all of them but those that belong
/// to one connection (hop-by-hop, dropped as `Forwarding` drops them), those the server writes
/// itself (`Date`, `Content-Length`, `Transfer-Encoding`, `Connection`, which a scenario file
/// may not declare), and the secrets (`Set-Cookie` and credentials), unless asked to keep them
/// (`--keep-header`). Headers a file cannot declare as they are (a name that is not a header
/// name, a value holding `{{`, which a header value reads as a placeholder, headers past the
/// 8 KiB a response's headers may take) are left out with a note saying so.
public struct HeaderSelection: Sendable {
    /// Headers that carry credentials: a session cookie or token written into a scenario file
    /// would be shared with whoever gets the file.
    public static let secretHeaders: Set<String> = ["set-cookie", "set-cookie2", "authorization", "proxy-authorization", "cookie"]
    /// Headers the server writes itself, which a scenario file may not declare (as
    /// `FileCompiler.reservedHeaders` says).
    public static let serverHeaders: Set<String> = ["content-length", "transfer-encoding", "date", "connection"]

    /// Secret headers to keep, in lower case.
    public var kept: Set<String>

    /// Keeps the secret headers named in `keeping` (in any case).
    public init(keeping: [String] = []) {
        kept = Set(keeping.map { $0.lowercased() })
    }

    /// A header left out, and why.
    public struct LeftOut: Sendable, Equatable {
        /// The header's name, as the upstream wrote it.
        public var name: String
        /// Why it was left out, in a sentence fragment.
        public var reason: String
    }

    /// The headers of an answer as a file declares them: hop-by-hop, server and secret headers
    /// dropped, those of the same name (in any case) joined with `, ` under the first one's name
    /// (a mapping holds a name once), in order; with what was left out that the user may want
    /// to know of (secrets and headers that could not be written, not the server's own).
    /// `addedContentType` is the `Content-Type` the body's key adds when the headers have none:
    /// counted toward the 8 KiB limit.
    public func select(_ headers: [Field], addedContentType: String?) -> (kept: [Field], leftOut: [LeftOut]) {
        var kept: [Field] = []
        var leftOut: [LeftOut] = []
        for field in Forwarding.passedBack(headers) {
            let name = field.name.lowercased()
            if Self.serverHeaders.contains(name) { continue }
            if Self.secretHeaders.contains(name) && !self.kept.contains(name) {
                leftOut.append(LeftOut(name: field.name, reason: "it carries credentials (--keep-header \(field.name) keeps it)"))
                continue
            }
            guard !field.name.isEmpty, field.name.unicodeScalars.allSatisfy(Self.isTokenCharacter) else {
                leftOut.append(LeftOut(name: field.name, reason: "it is not a valid header name"))
                continue
            }
            if let index = kept.firstIndex(where: { $0.name.lowercased() == name }) {
                kept[index].value += ", " + field.value
            } else {
                kept.append(field)
            }
        }
        kept.removeAll { field in
            if field.value.isEmpty || field.value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
                leftOut.append(LeftOut(name: field.name, reason: "its value is empty or holds control characters, which a scenario file cannot declare"))
                return true
            }
            guard field.value.contains("{{") else { return false }
            leftOut.append(LeftOut(name: field.name, reason: "its value holds '{{', which a scenario file reads as a placeholder"))
            return true
        }
        let hasContentType = kept.contains { $0.name.lowercased() == "content-type" }
        let added = hasContentType ? [] : addedContentType.map { [Field("Content-Type", $0)] } ?? []
        while ResponseHead.headerBytes(kept + added) > ResponseHead.maximumHeaderBytes, let last = kept.last {
            kept.removeLast()
            leftOut.append(LeftOut(name: last.name, reason: "the headers before it take the \(ResponseHead.maximumHeaderBytes) bytes a response's headers may"))
        }
        return (kept, leftOut)
    }

    /// RFC 9110 token characters, the ones a header name may use.
    static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return false }
        if ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) { return true }
        return "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
    }
}
