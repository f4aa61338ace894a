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

    @Test func errorBodyIsTheJSONObjectEveryErrorSends() throws {
        let body = ErrorBody.json(reason: "no \"rule\"\nhere")
        #expect(String(decoding: body, as: UTF8.self) == #"{"error":true,"reason":"no \"rule\"\nhere"}"#)
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
