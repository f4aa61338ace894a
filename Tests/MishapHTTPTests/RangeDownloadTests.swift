import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapEngine
import MishapService
import MishapTestSupport
import Testing

/// Resumable downloads (`ranges:`) over real sockets, as raw clients and URLSession see them:
/// parts, 416, `If-Range`, the range faults, a download that dies at byte N and its resume,
/// HEAD, and the journal's record of the ranges asked and sent.
@Suite(.onBlockingThreads) struct RangeDownloadTests {
    static let body = patternedBody(100_000)

    static let yaml = """
        endpoints:
          - endpoint: GET /file
            rules:
              - name: first download dies
                when: { headers: { Range: { absent: true } } }
                respond: { base64: "\(Data(body).base64EncodedString())", ranges: { resetAfterBytes: 40000 } }
              - name: resume
                respond: { base64: "\(Data(body).base64EncodedString())", ranges: true }
          - endpoint: GET /closing
            rules:
              - { name: closing, respond: { base64: "\(Data(body).base64EncodedString())", ranges: { closeAfterBytes: 30% } } }
          - endpoint: GET /ignoring
            rules:
              - { name: ignoring, respond: { text: abcdefghij, ranges: { fault: ignore-range } } }
          - endpoint: GET /refusing
            rules:
              - { name: refusing, respond: { text: abcdefghij, ranges: { fault: unsatisfiable } } }
          - endpoint: GET /changing
            rules:
              - { name: changing, respond: { text: abcdefghij, ranges: { etag: '"v1"', fault: changed-etag } } }
          - endpoint: GET /text
            rules:
              - { name: text, respond: { text: abcdefghij, ranges: { etag: '"v1"' } } }
        """

    static func server() throws -> TestServer { try TestServer(yaml: yaml) }

    /// After a head read with `toHead`, the body bytes until the stream ends, and how.
    static func rest(of connection: RawHTTPConnection) throws -> ([UInt8], RawHTTPConnection.End) {
        try connection.restOfStream(until: .now + .seconds(10))
    }

    /// The story on one raw client: the download dies at byte 40,000 with a reset (the
    /// head promised 100,000), the resume with `Range` and `If-Range` gets the rest, and the
    /// bytes put together are the file's.
    @Test func aDownloadDiesAtByteNAndResumes() throws {
        let server = try Self.server()
        let first = try server.connect()
        try first.sendRequest("GET", "/file")
        let head = try first.readResponse(toHead: true)
        #expect(head.status == 200 && head.header("Content-Length") == "100000")
        #expect(head.header("Accept-Ranges") == "bytes")
        let tag = try #require(head.header("ETag"))
        let (received, end) = try Self.rest(of: first)
        #expect(end == .reset)
        #expect(received == Array(Self.body[..<40_000]))

        let resume = try server.connect()
        try resume.sendRequest("GET", "/file", headers: [("Range", "bytes=\(received.count)-"), ("If-Range", tag)])
        let rest = try resume.readResponse()
        #expect(rest.status == 206)
        #expect(rest.header("Content-Range") == "bytes 40000-99999/100000")
        #expect(rest.header("ETag") == tag)
        #expect(received + [UInt8](rest.body) == Self.body)

        // The journal shows the ranges asked and sent, and the cut.
        let entries = server.service.journal.entries().entries
        let cut = try #require(entries.first { $0.rule == "first download dies" }?.range)
        #expect(cut.asked == nil && cut.status == 200 && cut.cutAfterBytes == 40_000 && !cut.cutCloses)
        let resumed = try #require(entries.first { $0.rule == "resume" }?.range)
        #expect(resumed.asked == "bytes=40000-" && resumed.ifRange == tag)
        #expect(resumed.status == 206 && resumed.contentRange == "bytes 40000-99999/100000" && resumed.cutAfterBytes == nil)
    }

    /// `closeAfterBytes`: the bytes, then a clean close (EOF) short of the Content-Length.
    @Test func aCloseAfterSomeBytes() throws {
        let server = try Self.server()
        let connection = try server.connect()
        try connection.sendRequest("GET", "/closing")
        let head = try connection.readResponse(toHead: true)
        #expect(head.status == 200 && head.header("Content-Length") == "100000")
        let (received, end) = try Self.rest(of: connection)
        #expect(end == .closed)
        #expect(received == Array(Self.body[..<30_000]), "\(received.count) bytes, \(end)")
        // A part is cut at 30% of the part sent.
        let part = try server.connect()
        try part.sendRequest("GET", "/closing", headers: [("Range", "bytes=90000-")])
        let partHead = try part.readResponse(toHead: true)
        #expect(partHead.status == 206 && partHead.header("Content-Length") == "10000")
        let (partBytes, partEnd) = try Self.rest(of: part)
        #expect(partEnd == .closed && partBytes == Array(Self.body[90_000..<93_000]))
    }

    @Test func partsSuffixesAnd416() throws {
        let server = try Self.server()
        let suffix = try server.sendRaw("GET", "/text", headers: [("Range", "bytes=-3")])
        #expect(suffix.status == 206 && suffix.text == "hij" && suffix.header("Content-Range") == "bytes 7-9/10")
        let open = try server.sendRaw("GET", "/text", headers: [("Range", "bytes=8-")])
        #expect(open.status == 206 && open.text == "ij")
        let past = try server.sendRaw("GET", "/text", headers: [("Range", "bytes=10-")])
        #expect(past.status == 416 && past.body.isEmpty && past.header("Content-Range") == "bytes */10")
        // Several ranges get the whole body (no multipart/byteranges).
        let several = try server.sendRaw("GET", "/text", headers: [("Range", "bytes=0-1,4-5")])
        #expect(several.status == 200 && several.text == "abcdefghij" && several.header("Content-Range") == nil)
    }

    @Test func ifRangeWithAnotherTagGetsTheWholeBody() throws {
        let server = try Self.server()
        let matching = try server.sendRaw("GET", "/text", headers: [("Range", "bytes=5-"), ("If-Range", "\"v1\"")])
        #expect(matching.status == 206 && matching.text == "fghij")
        let stale = try server.sendRaw("GET", "/text", headers: [("Range", "bytes=5-"), ("If-Range", "\"v0\"")])
        #expect(stale.status == 200 && stale.text == "abcdefghij" && stale.header("ETag") == "\"v1\"")
    }

    /// HEAD: the headers of the whole body, with no body and no cut.
    @Test func headGetsTheHeadersWithoutTheBody() throws {
        let server = try Self.server()
        let head = try server.sendRaw("HEAD", "/file")
        #expect(head.status == 200 && head.header("Content-Length") == "100000")
        #expect(head.header("Accept-Ranges") == "bytes" && head.header("ETag") != nil)
    }

    @Test func theRangeFaults() throws {
        let server = try Self.server()
        let ignored = try server.sendRaw("GET", "/ignoring", headers: [("Range", "bytes=5-")])
        #expect(ignored.status == 200 && ignored.text == "abcdefghij" && ignored.header("Accept-Ranges") == "bytes")
        let refused = try server.sendRaw("GET", "/refusing", headers: [("Range", "bytes=5-")])
        #expect(refused.status == 416 && refused.header("Content-Range") == "bytes */10")
        let changed = try server.sendRaw("GET", "/changing", headers: [("Range", "bytes=5-"), ("If-Range", "\"v1\"")])
        #expect(changed.status == 200 && changed.text == "abcdefghij" && changed.header("ETag") == "\"v1-changed\"")
        let faults = server.service.journal.entries().entries.compactMap { $0.range?.fault?.rawValue }
        #expect(faults == ["ignore-range", "unsatisfiable", "changed-etag"])
    }

    /// URLSession (FoundationNetworking on Linux): the reset download fails as a lost
    /// connection, the closed one as an unknown error; a 416 is an answer, not an error; a
    /// request with `Range` and `If-Range` set on the URLRequest gets the part (206).
    @Test func urlSessionResumesWithRangeHeaders() async throws {
        let server = try Self.server()
        let error = await urlError { try await server.send("GET", "/file") }
        #expect(error?.code == .networkConnectionLost, "\(String(describing: error))")
        let closed = await urlError { try await server.send("GET", "/closing") }
        // FoundationNetworking on Linux reports libcurl's "partial file" (a body shorter than its
        // Content-Length) as an unknown error: "transfer closed with 70000 bytes remaining to read".
        #expect(closed?.code == .unknown, "\(String(describing: closed))")
        #expect(closed?.localizedDescription.contains("70000 bytes remaining") == true, "\(String(describing: closed))")
        let refused = try await server.send("GET", "/refusing", headers: ["Range": "bytes=5-"])
        #expect(refused.status == 416 && refused.body.isEmpty)
        let whole = try await server.send("GET", "/file", headers: ["Range": "bytes=0-"])
        #expect(whole.status == 206 && [UInt8](whole.body) == Self.body)
        let tag = try #require(whole.header("ETag"))
        let rest = try await server.send("GET", "/file", headers: ["Range": "bytes=40000-", "If-Range": tag])
        #expect(rest.status == 206 && rest.header("Content-Range") == "bytes 40000-99999/100000")
        #expect(Array(Self.body[..<40_000]) + [UInt8](rest.body) == Self.body)
        let stale = try await server.send("GET", "/file", headers: ["Range": "bytes=40000-", "If-Range": "\"stale\""])
        #expect(stale.status == 200 && [UInt8](stale.body) == Self.body)
    }

    /// Under a session's network profile with a bandwidth, the bytes before the reset all come,
    /// paced by the profile: 40,000 bytes at 100,000 a second, the first tenth at once.
    @Test func underANetworkProfileTheBytesBeforeTheCutAllCome() throws {
        let server = try Self.server()
        server.service.setNetwork(NetworkProfile(downBytesPerSecond: 100_000), session: "slow")
        let connection = try server.connect()
        let start = ContinuousClock.now
        try connection.sendRequest("GET", "/file", headers: [("X-Mishap-Session", "slow")])
        let head = try connection.readResponse(toHead: true)
        #expect(head.status == 200 && head.header("Content-Length") == "100000")
        let (received, end) = try Self.rest(of: connection)
        #expect(end == .reset)
        #expect(received == Array(Self.body[..<40_000]), "\(received.count) bytes")
        #expect(start.duration(to: .now) >= .milliseconds(300), "\(start.duration(to: .now))")
    }

    /// A `file` body, read from the scenarios folder: its ETag is the one worked out once.
    @Test func aFileBody() throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("big.bin", Data(Self.body))
        _ = try folder.write("f.yaml", "endpoint: GET /big\nrules:\n  - name: f\n    respond: { file: big.bin, ranges: true }\n")
        let server = try TestServer(directory: folder.path)
        let part = try server.sendRaw("GET", "/big", headers: [("Range", "bytes=99990-")])
        #expect(part.status == 206 && [UInt8](part.body) == Array(Self.body[99_990...]))
        #expect(part.header("ETag") == RangeSupport.strongETag(of: Self.body))
        #expect(part.header("Content-Type") == "application/octet-stream")
    }
}
