import Foundation
import MishapImport
import MishapService
import MishapTestSupport
import Testing

/// Examples whose text YAML or Mishap would read differently if written carelessly come back
/// byte for byte, with the response headers declared: quotes, backslashes, line breaks, YAML's special words, `#`, non-ASCII and
/// `{{`, which Mishap reads as a placeholder in `json` and `text` bodies.
@Suite("Imported examples keep their text", .onBlockingThreads)
struct ExampleTextTests {
    static let description = #"""
        {
          "openapi": "3.1.0",
          "info": { "title": "Texts", "version": "1" },
          "paths": {
            "/note": {
              "get": {
                "responses": {
                  "429": { "description": "slow down", "headers": { "Retry-After": { "schema": { "type": "integer" }, "example": 30 } } },
                  "200": { "description": "ok",
                    "headers": {
                      "X-Rate-Limit-Remaining": { "schema": { "type": "integer", "example": 99 } },
                      "Location": { "schema": { "type": "string", "format": "uri" } },
                      "Content-Type": { "schema": { "type": "string" }, "example": "text/html" },
                      "X-Template": { "schema": { "type": "string" }, "example": "{{no}}" }
                    },
                    "content": { "application/json": {
                    "example": { "text": "line\none \"quoted\" \\ back", "yes": "yes", "null": "~", "hash": "a # b: c",
                                 "unicode": "Grüße ✓ \u2028", "template": "Hello {{name}}", "n": 1.5, "ok": true, "nothing": null }
                  } } }
                }
              }
            },
            "/plain": {
              "get": {
                "responses": {
                  "200": { "description": "ok", "content": { "text/plain": { "example": "Hi {{user}}\n" } } }
                }
              }
            }
          }
        }
        """#

    @Test("Every example is answered exactly as written, with its declared headers")
    func examplesComeBackExactly() async throws {
        let temporary = try TemporaryFolder()
        let file = try temporary.write("texts.json", Self.description)
        let (folder, _) = try ImportFixtures.imported(file, into: temporary)
        let server = try TestServer(directory: folder)
        let note = try await server.send("GET", "/note")
        let object = try #require(try JSONSerialization.jsonObject(with: note.body) as? [String: Any])
        #expect(object["text"] as? String == "line\none \"quoted\" \\ back")
        #expect(object["yes"] as? String == "yes" && object["null"] as? String == "~" && object["hash"] as? String == "a # b: c")
        #expect(object["unicode"] as? String == "Grüße ✓ \u{2028}")
        #expect(object["template"] as? String == "Hello {{name}}")
        #expect(object["n"] as? Double == 1.5 && object["ok"] as? Bool == true && object["nothing"] is NSNull)
        #expect(note.header("Content-Type") == "application/json; charset=utf-8")
        // Declared headers: the example, one made from the schema; the server's own and a
        // value that would read as a placeholder are left out.
        #expect(note.header("X-Rate-Limit-Remaining") == "99" && note.header("Location") == "https://example.com/")
        #expect(note.header("X-Template") == nil)
        let limited = try await server.send("GET", "/note", headers: ["X-Mishap-Rule": "tooManyRequests"])
        #expect(limited.status == 429 && limited.header("Retry-After") == "30")
        let plain = try await server.send("GET", "/plain")
        #expect(plain.text == "Hi {{user}}\n")
        #expect(plain.header("Content-Type")?.hasPrefix("text/plain") == true)
    }
}
