import Foundation
import MishapTestSupport
import Testing

/// `mishap validate` refuses, at their line and column, response header values that could not
/// be sent as written (they validated, then went missing from every answer), and `serve` of
/// such a folder does not start.
@Suite("header values in files", .onBlockingThreads)
struct HeaderValueFileTests {
    @Test func validateLocatesUnsendableHeaderValues() async throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("scenarios/h.yaml", """
            endpoint: GET /h
            rules:
              - name: h
                respond:
                  headers:
                    X-Break: "a\\r\\nX-Injected: yes"
                    X-Nul: "a\\0b"
                    X-Empty: ""
                    X-Fine: "a\\tb {{query.x}}"
                  contentType: "text/plain\\n"
                  text: ok
            """)
        let result = try await runMishap(["validate", folder.path + "/scenarios"])
        #expect(result.status == 1, "\(result)")
        let file = folder.path + "/scenarios/h.yaml"
        for line in [
            "\(file):6:18: 'X-Break': a header value must not hold a line break (CR or LF): it would end the header",
            "\(file):7:16: 'X-Nul': a header value must not hold NUL: it would cut the value short",
            "\(file):8:18: 'X-Empty': a header value must not be empty: an empty header cannot be sent; leave the header out",
            "\(file):10:20: 'contentType': a header value must not hold a line break (CR or LF): it would end the header",
        ] {
            #expect(result.standardError.contains(line) || result.standardOutput.contains(line), "\(line)\n\(result)")
        }
        #expect(!(result.standardError + result.standardOutput).contains("X-Fine"), "\(result)")
    }
}
