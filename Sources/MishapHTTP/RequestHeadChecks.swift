import CMicroHTTPD
import CMicroHTTPDShim
import MishapEngine
import MishapSupport

/// What is refused as soon as a request's head has arrived, before any of its body is read:
/// heads whose body framing libmicrohttpd would get wrong, and paths it would cut short. Each is
/// answered with Mishap's JSON error body on the access handler's first call, which makes
/// libmicrohttpd close the connection after the answer, as RFC 9112 asks for these
/// (docs/libmicrohttpd.md, "Refusals on the first call").
enum RequestHeadChecks {
    /// The answer for a request head that must not be served, or nil for one that may.
    ///
    /// - `pathHasEncodedNul`: the raw target's path (before `?`) holds `%00`, which
    ///   libmicrohttpd decodes into the end of the path's C string: 400.
    /// - More than one `Content-Length` header, equal or not: 400 (RFC 9112 section 6.3; equal
    ///   ones are refused too, as nginx does, and as libmicrohttpd refuses `Content-Length: 5, 5`).
    /// - `Transfer-Encoding` with `Content-Length`: 400 (RFC 9112 section 6.3, request smuggling).
    /// - `Transfer-Encoding` whose last coding is not `chunked` (`gzip`, `chunked, gzip`), or
    ///   that applies `chunked` twice: 400, since the body's length cannot be known (RFC 9112
    ///   section 6.3); other codings before a final `chunked` (`gzip, chunked`): 501, a coding
    ///   Mishap does not implement (RFC 9112 section 6.1); so is any spelling of a lone `chunked`
    ///   that libmicrohttpd would not read as chunked (`chunked,`, or with spaces after it).
    /// - `Expect: 100-continue` on HTTP/1.1 with a `Content-Length` over `maxBodyBytes`: 413 at
    ///   once, instead of "100 Continue" and a body that would be dropped.
    static func refusal(pathHasEncodedNul: Bool, version: String, headers: [Field], maxBodyBytes: Int) -> ResponsePlan? {
        if pathHasEncodedNul {
            return .error(400, reason: "Path contains an encoded NUL (%00)")
        }
        var transferEncodings: [String] = []
        var contentLengths: [String] = []
        var expectsContinue = false
        for header in headers {
            switch header.name.lowercased() {
            case "transfer-encoding": transferEncodings.append(header.value)
            case "content-length": contentLengths.append(String(header.value.trimmingASCIIWhitespace()))
            case "expect": expectsContinue = expectsContinue || header.value.trimmingASCIIWhitespace().lowercased() == "100-continue"
            default: break
            }
        }
        if contentLengths.count > 1 {
            return .error(400, reason: "More than one Content-Length header")
        }
        if !transferEncodings.isEmpty {
            if !contentLengths.isEmpty {
                return .error(400, reason: "Both Transfer-Encoding and Content-Length")
            }
            let listed = transferEncodings.joined(separator: ", ")
            let codings = listed.split(separator: ",").map { $0.trimmingASCIIWhitespace().lowercased() }.filter { !$0.isEmpty }
            if codings.last != "chunked" {
                return .error(400, reason: "Transfer-Encoding \"\(listed)\" does not end with chunked: the body's length is unknown")
            }
            if codings.dropLast().contains("chunked") {
                return .error(400, reason: "Transfer-Encoding \"\(listed)\" applies chunked more than once")
            }
            // libmicrohttpd reads a chunked body only when the first Transfer-Encoding header is
            // `chunked` exactly (in any case; it strips the spaces before a value, not after),
            // and waits for any other body until the idle timeout.
            if transferEncodings.count > 1 || transferEncodings[0].lowercased() != "chunked" {
                return .error(501, reason: "Transfer-Encoding \"\(listed)\" is not implemented: only chunked is")
            }
        }
        // libmicrohttpd sends "100 Continue" to HTTP/1.1 and later 1.x clients only.
        if expectsContinue, version.hasPrefix("HTTP/1."), version != "HTTP/1.0", let declared = contentLengths.first.flatMap({ UInt64($0) }),
           declared > UInt64(max(maxBodyBytes, 0)) {
            return .payloadTooLarge(limit: maxBodyBytes)
        }
        return nil
    }

    /// The refusal for the request on `connection`, decided on the access handler's first call.
    /// Cheap for an ordinary request: `counts`, the caller's scan of its few headers in C
    /// (`mishap_count_framing_headers`), and nothing more unless one bears on framing
    /// (`Transfer-Encoding`, a second `Content-Length`, `Expect: 100-continue`) or the path holds
    /// `%00`; only then are the headers copied and checked.
    static func refusal(on connection: OpaquePointer, version: UnsafePointer<CChar>?, pathHasEncodedNul: Bool,
                        counts: mishap_framing_headers, maxBodyBytes: Int) -> ResponsePlan? {
        if !pathHasEncodedNul {
            if counts.transfer_encoding == 0 && counts.content_length < 2 && counts.expect_continue == 0 { return nil }
        }
        return refusal(pathHasEncodedNul: pathHasEncodedNul, version: version.map { String(cString: $0) } ?? "",
                       headers: connectionValues(connection, .HEADER_KIND), maxBodyBytes: maxBodyBytes)
    }
}
