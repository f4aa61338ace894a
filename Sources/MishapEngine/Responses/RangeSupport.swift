import MishapSupport

/// `ranges:` on a response with a body: `Range` requests are answered with the part asked
/// for (206 and `Content-Range`), every answer carries `Accept-Ranges: bytes` and an `ETag`,
/// and `If-Range` is honoured. A fault of its own (`RangeFault`) breaks resuming, and a cut
/// (`RangeCut`) breaks the connection after some bytes of the body sent.
///
/// Only `GET` requests are answered in part (RFC 9110 defines range handling for `GET` only);
/// a `HEAD` gets the headers of the whole body. A `Range` of several ranges, of another unit
/// than `bytes`, or written wrong, is ignored: the whole body, 200, as RFC 9110 allows.
public struct RangeSupport: Sendable, Equatable {
    /// The entity tag sent (quoted, `"v1"`, or weak, `W/"v1"`): declared, or worked out once
    /// from a body the same for every request; nil: worked out from each request's body.
    public var etag: String?
    /// How the answer to a `Range` request is broken, if it is.
    public var fault: RangeFault?
    /// Break the connection after some bytes of the body sent (whole or part).
    public var cut: RangeCut?

    public init(etag: String? = nil, fault: RangeFault? = nil, cut: RangeCut? = nil) {
        self.etag = etag
        self.fault = fault
        self.cut = cut
    }

    /// The same support with its `ETag` worked out now when the body is the same for every
    /// request (`staticBody`), so that no request pays for hashing it.
    public func resolved(staticBody: [UInt8]?) -> RangeSupport {
        guard etag == nil, let staticBody else { return self }
        var resolved = self
        resolved.etag = Self.strongETag(of: staticBody)
        return resolved
    }

    /// A strong entity tag for `bytes`: their FNV-1a 64-bit hash and their length, in hex.
    /// Not a cryptographic digest: it only has to change when a scenario's body changes.
    public static func strongETag(of bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        let digits = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - digits.count) + digits + "-" + String(bytes.count, radix: 16) + "\""
    }

    /// The entity tag `changed-etag` sends instead of `etag`: the same, `-changed` added
    /// inside its quotes, so that an `If-Range` with the tag a client kept no longer matches.
    public static func changed(_ etag: String) -> String {
        guard etag.hasSuffix("\"") else { return etag + "-changed" }
        return String(etag.dropLast()) + "-changed\""
    }

    /// Whether `text` is an entity tag as RFC 9110 writes it: `"…"` or `W/"…"`, the characters
    /// between the quotes visible ASCII but `"` (or bytes above 0x7F).
    public static func isEntityTag(_ text: String) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.starts(with: "W/".utf8) { bytes = bytes.dropFirst(2) }
        guard bytes.count >= 2, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"") else { return false }
        return bytes.dropFirst().dropLast().allSatisfy { $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }
    }

    /// Turns a whole-body plan into the answer to the request's `Range` (if any): 206 with the
    /// part asked, 416 when no byte of it exists, or the whole body; the headers, the fault,
    /// the cut, and what the journal is told (`bookkeeping.range`).
    func apply(to plan: inout ResponsePlan, request: Request) {
        // A rule's status other than 200 (refused in files) is not a body that can be resumed.
        guard plan.status == 200, plan.destination.isHere else { return }
        let total = plan.body.count
        let tag = etag ?? Self.strongETag(of: plan.body)
        let sentTag = fault == .changedETag ? Self.changed(tag) : tag
        plan.headers.append(Field("Accept-Ranges", "bytes"))
        plan.headers.append(Field("ETag", sentTag))
        let asked = request.headerValue("Range")
        let ifRange = request.headerValue("If-Range")
        var answer = RangeRequest.Answer.whole
        if request.method == "GET", let asked {
            switch fault {
            case .ignoreRange?:
                answer = .whole
            case .unsatisfiable?:
                answer = .unsatisfiable
            case .changedETag?, nil:
                if let ifRange, !Self.strongMatch(ifRange, sentTag) {
                    answer = .whole
                } else {
                    answer = RangeRequest.answer(to: asked, total: total)
                }
            }
        }
        var contentRange: String?
        switch answer {
        case .whole:
            break
        case .part(let part):
            contentRange = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(total)"
            plan.status = 206
            plan.body = Array(plan.body[part])
        case .unsatisfiable:
            contentRange = "bytes */\(total)"
            plan.status = 416
            plan.body = []
        }
        if let contentRange { plan.headers.append(Field("Content-Range", contentRange)) }
        var cutAfter: Int?
        if let cut, request.method != "HEAD" {
            let bytes = cut.mark.bytes(of: plan.body.count)
            if bytes < plan.body.count { cutAfter = max(bytes, 0) }
        }
        plan.cutAfterBytes = cutAfter
        plan.bookkeeping.range = RangeOutcome(
            asked: asked, ifRange: ifRange, status: plan.status, contentRange: contentRange, etag: sentTag,
            fault: fault, cutAfterBytes: cutAfter, cutCloses: cut?.closes ?? false)
    }

    /// RFC 9110's strong comparison, which `If-Range` uses: both tags strong and the same. A
    /// date in `If-Range` never matches: the answers carry no `Last-Modified`.
    static func strongMatch(_ ifRange: String, _ tag: String) -> Bool {
        let value = ifRange.trimmingASCIIWhitespace()
        return !value.hasPrefix("W/") && !tag.hasPrefix("W/") && value == tag
    }
}

/// How `ranges:` breaks resuming (`ranges: { fault: NAME }`).
public enum RangeFault: String, Sendable, CaseIterable {
    /// A `Range` request gets the whole body, 200, as from a server without range support
    /// (though `Accept-Ranges: bytes` says otherwise).
    case ignoreRange = "ignore-range"
    /// A `Range` request gets 416 with `Content-Range: bytes */total`, whatever it asks.
    case unsatisfiable
    /// Every answer carries an `ETag` other than the body's, so an `If-Range` with the tag of
    /// an earlier download fails (200, the whole body), as when the file changed.
    case changedETag = "changed-etag"
}

/// Breaking the connection after some bytes of the body sent (`resetAfterBytes`,
/// `closeAfterBytes`): the head, with the `Content-Length` of the whole answer, then that many
/// bytes, then a reset (RST) or a close (FIN).
public struct RangeCut: Sendable, Equatable {
    /// How many bytes of the body sent (of the part, for a 206) go before the break.
    public var mark: ByteMark
    /// A close (FIN) rather than a reset (RST).
    public var closes: Bool

    public init(mark: ByteMark, closes: Bool) {
        self.mark = mark
        self.closes = closes
    }
}

/// What `ranges:` made of one request, for the journal: the `Range` and `If-Range` asked, and
/// what was sent.
public final class RangeOutcome: Sendable {
    /// The request's `Range` and `If-Range` headers, as sent.
    public let asked: String?
    public let ifRange: String?
    /// 200 (the whole body), 206 or 416.
    public let status: Int
    /// The `Content-Range` sent (`bytes 0-99/1000`, `bytes */1000`); nil with the whole body.
    public let contentRange: String?
    /// The `ETag` sent.
    public let etag: String
    public let fault: RangeFault?
    /// The body bytes sent before the connection was broken; nil: the whole answer.
    public let cutAfterBytes: Int?
    /// Whether the break is a close (FIN) rather than a reset.
    public let cutCloses: Bool

    public init(asked: String?, ifRange: String?, status: Int, contentRange: String?, etag: String,
                fault: RangeFault?, cutAfterBytes: Int?, cutCloses: Bool) {
        self.asked = asked
        self.ifRange = ifRange
        self.status = status
        self.contentRange = contentRange
        self.etag = etag
        self.fault = fault
        self.cutAfterBytes = cutAfterBytes
        self.cutCloses = cutCloses
    }
}
