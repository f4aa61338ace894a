import Foundation
import MishapHTTP
import MishapSupport
import MishapTestSupport
import Testing

/// A request's path is served without its dot segments (RFC 3986 section 5.2.4), after
/// libmicrohttpd has decoded it: `..` spelled `%2e%2e`, `.%2e` or before an encoded slash is
/// still `..`, and no `..` climbs above `/`. What reaches the engine is the path the request
/// stands for.
@Suite(.onBlockingThreads) struct DotSegmentTests {
    @Test(arguments: [
        ("/a/b/../c", "/a/c"),
        ("/a/./b", "/a/b"),
        ("/a/%2e%2e/b", "/b"),
        ("/a/%2E%2e/%2e/b", "/b"),
        ("/a/.%2e/b", "/b"),
        ("/a/..%2Fb", "/b"),
        ("/../../../etc/passwd", "/etc/passwd"),
        ("/a/b/..", "/a/"),
        ("/a/.", "/a/"),
        ("/..", "/"),
        ("http://127.0.0.1/x/../y", "/y"),
        ("/a/...b/.c/..d", "/a/...b/.c/..d"),
        ("/a//b", "/a//b"),
    ])
    func theEngineGetsThePathWithoutDotSegments(target: String, path: String) throws {
        let recording = try RecordingServer()
        let connection = try RawHTTPConnection(port: recording.port, timeoutSeconds: 5)
        try connection.sendRequest("GET", target + "?q=1")
        #expect(try connection.readResponse().status == 200)
        let request = try #require(recording.responder.requests.first)
        #expect(request.path == path, "\(target)")
        #expect(request.queryValue("q") == "1")
    }

    @Test(arguments: [
        ("/", "/"), ("/a/b", "/a/b"), ("/a/./", "/a/"), ("/a/../", "/"), ("/a//../b", "/a/b"), ("/./.././a", "/a"),
        ("/a/b/c/./../../g", "/a/g"), ("/mid/content=5/../6", "/mid/6"), ("relative/../x", "relative/../x"),
    ])
    func removedAsTheRFCSays(path: String, expected: String) {
        #expect(DotSegments.removed(from: path) == expected)
    }

    @Test func aPathWithoutDotSegmentsIsLeftAsItIs() {
        for path in ["/", "/a.b/c.", "/.well-known/x", "/a/..b", "/...", "/a/b."] {
            #expect(!DotSegments.occur(in: path), "\(path)")
            #expect(DotSegments.removed(from: path) == path)
        }
        for path in ["/.", "/..", "/a/./b", "/a/../b", "/a/.."] { #expect(DotSegments.occur(in: path), "\(path)") }
    }
}
