import Foundation
import MishapSupport
import MishapTestSupport
import Testing

@Suite struct JSONEscapingTests {
    /// Every ASCII byte, alone and in text, comes back unchanged through a JSON parser.
    @Test(arguments: 0..<128)
    func everyASCIIByteRoundTrips(_ byte: Int) throws {
        let text = "a" + String(UnicodeScalar(UInt8(byte))) + "b"
        let literal = JSONEscaping.quoted(text)
        let parsed = try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String
        #expect(parsed == text, "\(byte): \(literal)")
        #expect(!literal.utf8.dropFirst().dropLast().contains { $0 < 0x20 || $0 == 0x7F }, "a raw control byte in \(literal)")
    }

    @Test func lineAndParagraphSeparatorsAreEscapedOtherScalarsPass() throws {
        let text = "x\u{2028}y\u{2029}z→€\u{2027}\u{202A}é😀"
        let literal = JSONEscaping.quoted(text)
        #expect(literal == #""x\u2028y\u2029z→€"# + "\u{2027}\u{202A}é😀\"")
        let parsed = try JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String
        #expect(parsed == text)
    }

    /// The escaper copies runs of plain bytes at once: against a scalar-by-scalar reference, on
    /// seeded random texts mixing plain ASCII, every escaped byte, U+2028/U+2029 and their
    /// neighbours starting with the same byte (E2), at the start, the end and next to each other.
    @Test func matchesAScalarByScalarReferenceOnRandomTexts() {
        func reference(_ text: String) -> String {
            var out = ""
            for scalar in text.unicodeScalars {
                switch scalar.value {
                case 0x22: out += "\\\""
                case 0x5C: out += "\\\\"
                case 0x0A: out += "\\n"
                case 0x0D: out += "\\r"
                case 0x09: out += "\\t"
                case 0x00..<0x20, 0x7F:
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                case 0x2028: out += "\\u2028"
                case 0x2029: out += "\\u2029"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
        let pieces = ["a", "bc", "plain text ", "\"", "\\", "\n", "\r", "\t", "\u{0}", "\u{1F}", "\u{7F}",
                      "\u{2028}", "\u{2029}", "\u{2027}", "\u{202A}", "\u{2080}", "€", "é", "😀", "→"]
        var random = SeededRandom(seed: 0x7E5C)
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 0...12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            var out: [UInt8] = []
            JSONEscaping.appendEscaped(text, to: &out)
            #expect(String(decoding: out, as: UTF8.self) == reference(text), "\(Array(text.unicodeScalars))")
        }
    }

    @Test func errorBodyIsTheJSONObjectEveryErrorSends() throws {
        let body = ErrorBody.json(reason: "no \"rule\"\nhere")
        #expect(String(decoding: body, as: UTF8.self) == #"{"error":true,"reason":"no \"rule\"\nhere"}"#)
    }
}

@Suite struct StringBytesTests {
    /// Bytes, not characters: a combining mark after the prefix's last slash makes another
    /// character of it, so `hasPrefix` says no where the bytes say yes.
    @Test func hasUTF8PrefixComparesBytes() {
        #expect("/__mishap/health".hasUTF8Prefix("/__mishap/"))
        #expect("/__mishap/".hasUTF8Prefix("/__mishap/"))
        #expect(!"/__mishap".hasUTF8Prefix("/__mishap/"))
        #expect(!"/__mishaq/health".hasUTF8Prefix("/__mishap/"))
        #expect(!"".hasUTF8Prefix("/"))
        #expect("anything".hasUTF8Prefix(""))
        let combining = "/__mishap/\u{301}health"
        #expect(combining.hasUTF8Prefix("/__mishap/"))
        #expect(!combining.hasPrefix("/__mishap/"))
    }

    /// The ASCII fast path and the general path agree with the standard library's validation,
    /// for arrays, slices and bytes that are not valid UTF-8.
    @Test func validUTF8TakesWhatTheStandardLibraryTakes() {
        let cases: [[UInt8]] = [
            [], Array("userName".utf8), Array("jörg 😀".utf8), [0x61, 0xFF, 0x62], [0xE2, 0x82],
            [0xF0, 0x9F, 0x98], [0xC0, 0xAF], [0xED, 0xA0, 0x80], Array("a\u{0}b".utf8) + [0],
        ]
        for bytes in cases {
            #expect(String(validUTF8: bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
            #expect(String(validUTF8: bytes.dropFirst()) == String(validating: bytes.dropFirst(), as: UTF8.self), "\(bytes)")
        }
        #expect(String(validUTF8: Array("jörg".utf8)) == "jörg")
        #expect(String(validUTF8: [0x61, 0x80]) == nil)
    }
}

@Suite struct Base64Tests {
    @Test(arguments: [(0, ""), (1, "AA=="), (2, "AAE="), (3, "AAEC"), (4, "AAECAw==")])
    func encodesWithPadding(_ count: Int, _ expected: String) {
        #expect(Base64.encode(Array(0..<UInt8(count))) == expected)
    }

    @Test func decodesWhatItEncodesAndRefusesWhatIsNotBase64() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        #expect(Base64.decode("aGk") == Array("hi".utf8), "padding is optional")
        #expect(Base64.decode(" aG\nk= ") == Array("hi".utf8), "white space is ignored")
        for bad in ["a", "aGk=x", "a*b=", "aGl="] { #expect(Base64.decode(bad) == nil, "\(bad)") }
    }
}

@Suite struct WallClockTests {
    @Test func httpDatesFormatAndParseBothWays() {
        #expect(WallClock.httpDate(secondsSinceEpoch: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(WallClock.secondsSinceEpoch(httpDate: "Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        let now = WallClock.nowSeconds()
        #expect(WallClock.secondsSinceEpoch(httpDate: WallClock.httpDate(secondsSinceEpoch: now)) == Int64(now))
        for bad in ["", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nox 1994 08:49:37 GMT", "120"] {
            #expect(WallClock.secondsSinceEpoch(httpDate: bad) == nil, "\(bad)")
        }
    }

    @Test func iso8601KeepsMilliseconds() {
        #expect(WallClock.iso8601(milliseconds: 784_111_777_045) == "1994-11-06T08:49:37.045Z")
        let now = WallClock.nowMilliseconds()
        #expect(abs(now / 1000 - Int64(WallClock.nowSeconds())) <= 1)
    }
}

@Suite struct POSIXTests {
    @Test func filesAreReplacedWholeAndListed() throws {
        let temporary = try TemporaryFolder()
        let folder = temporary.path
        #expect(FileSystem.replaceContents(of: folder + "/a.txt", with: "one\n"))
        #expect(FileSystem.replaceContents(of: folder + "/a.txt", with: "two\n"))
        #expect(FileSystem.readText(folder + "/a.txt") == "two\n")
        #expect(mkdir(folder + "/sub", 0o755) == 0)
        let entries = FileSystem.entries(of: folder).sorted { $0.name < $1.name }
        #expect(entries.map(\.name) == ["a.txt", "sub"] && entries.map(\.isFolder) == [false, true])
        #expect(FileSystem.readText(folder + "/missing") == nil)
        #expect(FileSystem.realPath(folder + "/sub/..") == FileSystem.realPath(folder))
        #expect(FileSystem.absolutePath("/x") == "/x" && FileSystem.absolutePath("x").hasSuffix("/x"))
    }

    @Test func pipesCarryWholeWritesAndCloseOnExec() throws {
        let pipe = try #require(FileDescriptor.makePipe())
        defer { close(pipe.read); close(pipe.write) }
        #expect(fcntl(pipe.read, F_GETFD) & FD_CLOEXEC != 0 && fcntl(pipe.write, F_GETFD) & FD_CLOEXEC != 0)
        #expect(FileDescriptor.writeAll(pipe.write, "hello"))
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(read(pipe.read, &buffer, 16) == 5 && Array(buffer.prefix(5)) == Array("hello".utf8))
    }

    @Test func inheritedDescriptorsAreMarkedCloseOnExec() throws {
        let descriptor = open("/dev/null", O_RDONLY)   // without O_CLOEXEC
        defer { close(descriptor) }
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC == 0)
        FileDescriptor.markInheritedCloseOnExec()
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func threadsRunAndAreJoined() {
        final class Flag: @unchecked Sendable { var value = 0 }
        let flag = Flag()
        let thread = OwnThread { usleep(20_000); flag.value = 42 }
        thread?.join()
        #expect(thread != nil && flag.value == 42)
    }

    #if os(Linux)
    @Test func folderEventsAreNoticed() throws {
        let temporary = try TemporaryFolder()
        let folder = temporary.path
        let events = try #require(FileEvents())
        events.watch(folder: folder)
        #expect(FileSystem.replaceContents(of: folder + "/new.yaml", with: "x"))
        var fds = [pollfd(fd: events.descriptor, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&fds, 1, 2000) == 1, "no event within 2 s")
        events.drain()
        fds[0].revents = 0
        #expect(poll(&fds, 1, 0) == 0, "events left after drain")
    }
    #endif
}
