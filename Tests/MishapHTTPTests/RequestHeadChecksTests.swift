@testable import MishapHTTP
import MishapEngine
import Testing

/// The checks on a request's head and target, without a server.
@Suite struct RequestHeadChecksTests {
    func status(_ headers: [(String, String)], version: String = "HTTP/1.1", nul: Bool = false, limit: Int = 100) -> Int? {
        RequestHeadChecks.refusal(pathHasEncodedNul: nul, version: version, headers: headers.map { Field($0.0, $0.1) },
                                  maxBodyBytes: limit)?.status
    }

    @Test func ordinaryHeadsPass() {
        #expect(status([]) == nil)
        #expect(status([("Host", "x"), ("Accept", "*/*")]) == nil)
        #expect(status([("Content-Length", "100")]) == nil)
        #expect(status([("Transfer-Encoding", "chunked")]) == nil)
        #expect(status([("transfer-encoding", "CHUNKED")]) == nil)
        #expect(status([("Expect", "100-continue"), ("Content-Length", "100")]) == nil)
        #expect(status([("Expect", "100-continue"), ("Transfer-Encoding", "chunked")]) == nil)
    }

    @Test func anEncodedNulInThePathIs400() {
        #expect(status([], nul: true) == 400)
    }

    @Test func transferCodings() {
        #expect(status([("Transfer-Encoding", "gzip")]) == 400)
        #expect(status([("Transfer-Encoding", "")]) == 400)
        #expect(status([("Transfer-Encoding", "chunked, gzip")]) == 400)
        #expect(status([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "identity")]) == 400)
        #expect(status([("Transfer-Encoding", "chunked, chunked")]) == 400)
        #expect(status([("Transfer-Encoding", "gzip, chunked")]) == 501)
        #expect(status([("Transfer-Encoding", "identity"), ("TRANSFER-ENCODING", "chunked")]) == 501)
        // Chunked to RFC 9112, but not to libmicrohttpd, which would wait for the body.
        #expect(status([("Transfer-Encoding", "chunked ")]) == 501)
        #expect(status([("Transfer-Encoding", "chunked,")]) == 501)
        #expect(status([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "")]) == 501)
    }

    @Test func framingConflicts() {
        #expect(status([("Transfer-Encoding", "chunked"), ("Content-Length", "3")]) == 400)
        #expect(status([("Content-Length", "3"), ("Content-Length", "4")]) == 400)
        #expect(status([("Content-Length", "3"), ("content-length", "3")]) == 400)
    }

    @Test func expectContinueOverTheLimitIs413OnHTTP11Only() {
        #expect(status([("Expect", "100-continue"), ("Content-Length", "101")]) == 413)
        #expect(status([("expect", "100-Continue"), ("Content-Length", "101")]) == 413)
        #expect(status([("Expect", "100-continue"), ("Content-Length", "101")], version: "HTTP/1.0") == nil)
        #expect(status([("Content-Length", "101")]) == nil)
    }

    @Test func absoluteFormTargetsBecomePaths() {
        #expect(RequestTarget.path(of: "/a/b") == "/a/b")
        #expect(RequestTarget.path(of: "http://host/a/b") == "/a/b")
        #expect(RequestTarget.path(of: "HTTPS://host:8443/a") == "/a")
        #expect(RequestTarget.path(of: "http://host") == "/")
        #expect(RequestTarget.path(of: "http://user@host:1/") == "/")
        #expect(RequestTarget.path(of: "ftp://host/a") == "ftp://host/a")
        #expect(RequestTarget.path(of: "http:/a") == "http:/a")
        #expect(RequestTarget.path(of: "*") == "*")
        #expect(RequestTarget.path(of: "") == "")
    }
}
