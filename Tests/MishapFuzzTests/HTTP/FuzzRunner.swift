import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapTestSupport

/// What one case produced on the wire.
struct FuzzOutcome {
    var received: [UInt8] = []
    var end: RawHTTPConnection.End = .satisfied
    /// The errno that stopped sending (the server had closed), if any.
    var sendError: Int32?
    var connectError: String?
    var elapsed: Duration = .zero
    /// From our half-close to the end of the stream.
    var afterHalfClose: Duration?
}

/// Runs a fuzz case on a connection of its own, and checks what the server sent back.
enum FuzzRunner {
    /// How long a case may wait for the server: its idle timeout closes any connection by then.
    static let patience: Duration = .seconds(HTTPFuzzTests.configuration.connectionTimeoutSeconds + 4)

    /// A new connection for one case: each write leaves as its own segment, so requests split
    /// over writes arrive split, and a write the server leaves unread for 5 s gives up.
    static func connect(port: UInt16) throws -> RawHTTPConnection {
        try RawHTTPConnection(port: port, timeoutSeconds: 5, noDelay: true)
    }

    static func run(_ fuzzCase: FuzzCase, port: UInt16) -> FuzzOutcome {
        let started = ContinuousClock.now
        var outcome = exchange(fuzzCase, port: port)
        outcome.elapsed = .now - started
        return outcome
    }

    private static func exchange(_ fuzzCase: FuzzCase, port: UInt16) -> FuzzOutcome {
        var outcome = FuzzOutcome()
        let socket: RawHTTPConnection
        do { socket = try FuzzRunner.connect(port: port) } catch {
            outcome.connectError = "\(error)"
            return outcome
        }
        defer { socket.close() }
        for (index, piece) in fuzzCase.pieces.enumerated() {
            if index > 0 && fuzzCase.pauseMicroseconds > 0 { usleep(UInt32(fuzzCase.pauseMicroseconds)) }
            if let code = socket.write(piece) {
                outcome.sendError = code
                break
            }
        }
        let deadline = ContinuousClock.now + patience
        switch fuzzCase.ending {
        case .abort:
            socket.abort()
        case .halfClose:
            // The half-close goes out once the server has gone quiet: libmicrohttpd (0.9.75,
            // epoll) takes a short read as "drained", so a FIN that arrives with the last
            // request bytes goes unseen until its idle timeout closes the connection.
            outcome.end = readUntilQuiet(socket, into: &outcome.received, deadline: deadline)
            if outcome.end == .satisfied {
                socket.shutdownWrite()
                let halfClosed = ContinuousClock.now
                outcome.end = socket.read(into: &outcome.received, until: deadline)
                outcome.afterHalfClose = .now - halfClosed
            }
        case .readThenHalfClose(let milliseconds):
            outcome.end = socket.read(into: &outcome.received, until: .now + .milliseconds(milliseconds))
            if outcome.end == .timedOut {
                socket.shutdownWrite()
                let halfClosed = ContinuousClock.now
                outcome.end = socket.read(into: &outcome.received, until: deadline)
                outcome.afterHalfClose = .now - halfClosed
            }
        case .awaitResponses:
            let wanted = fuzzCase.expected?.count ?? 1
            let isHead = headFlags(fuzzCase)
            outcome.end = socket.read(into: &outcome.received, until: deadline) {
                WireReader.read($0, atEnd: false, isHead: isHead).finalCount >= wanted
            }
        }
        return outcome
    }

    /// Reads until nothing has arrived for `quiet`, the server closes, or `deadline` passes.
    static func readUntilQuiet(_ socket: RawHTTPConnection, into received: inout [UInt8], deadline: ContinuousClock.Instant,
                               quiet: Duration = .milliseconds(5)) -> RawHTTPConnection.End {
        while ContinuousClock.now < deadline {
            let before = received.count
            let end = socket.read(into: &received, until: min(.now + quiet, deadline))
            if end != .timedOut { return end }
            if received.count == before { return .satisfied }
        }
        return .timedOut
    }

    /// libmicrohttpd 0.9.75 refuses some requests while it parses their headers (a
    /// `Content-Length` it cannot parse: not a plain decimal number, or past 64 bits; cookies
    /// past its memory pool) with a 400, 413 or 431 whose head it writes twice (its error path
    /// builds the head, then its state machine goes on and builds it again), then closes:
    /// `HEAD HEAD BODY`. The access handler is never called for such a request, so Mishap
    /// cannot intervene. This returns the bytes without the first copy when they are exactly
    /// that (two heads equal but for the date, then libmicrohttpd's own HTML error page), so
    /// the rest is still read strictly.
    static func withoutDoubledErrorHead(_ bytes: [UInt8]) -> [UInt8]? {
        guard let firstEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return nil }
        let first = String(decoding: bytes[..<firstEnd], as: UTF8.self)
        let rest = Array(bytes[firstEnd...])
        guard rest.count >= firstEnd, ["400", "413", "431"].contains(where: { first.hasPrefix("HTTP/1.1 \($0) ") }),
              first.contains("\r\nConnection: close\r\n") else { return nil }
        let second = String(decoding: rest[..<firstEnd], as: UTF8.self)
        func withoutDate(_ head: String) -> [Substring] { head.split(separator: "\r\n").filter { !$0.hasPrefix("Date:") } }
        guard withoutDate(first) == withoutDate(second),
              String(decoding: rest[firstEnd...], as: UTF8.self).hasPrefix("<html><head><title>") else { return nil }
        return rest
    }

    static func headFlags(_ fuzzCase: FuzzCase) -> (Int) -> Bool {
        let methods = fuzzCase.expected?.map(\.method) ?? []
        return { $0 < methods.count && methods[$0] == "HEAD" }
    }

    /// Statuses an answer may have: the scenario's, Mishap's own (400 for a forced rule it does
    /// not know, 404, 405, 413, 431) and libmicrohttpd's refusals of broken requests. A 500
    /// would mean the server failed itself.
    /// The start of the reason of the 500 that answers when placeholders take a response's
    /// headers past their limit (`ResponsePlan.fittingResponseHead`).
    static let responseHeadTooLarge = "Mishap cannot send this response: its headers take "

    /// 403: an admin call whose mutated `Host` no longer names this machine (the admin API's
    /// DNS rebinding check).
    static let allowedStatuses: Set<Int> = [100, 200, 201, 202, 400, 403, 404, 405, 411, 413, 414, 417, 431, 501, 503, 505]

    /// The problems with an outcome, and the label it is counted under.
    static func check(_ fuzzCase: FuzzCase, _ outcome: FuzzOutcome) -> (problems: [String], label: String) {
        if let connectError = outcome.connectError { return (["could not connect: \(connectError)"], "connect failed") }
        if case .abort = fuzzCase.ending { return ([], "reset by the client") }
        var problems: [String] = []
        let closedByServer = outcome.end == .closed || outcome.end == .reset
        let doubled = withoutDoubledErrorHead(outcome.received)
        let stream = WireReader.read(doubled ?? outcome.received, atEnd: closedByServer, isHead: headFlags(fuzzCase))
        let finals = stream.responses.filter { !$0.isInterim }

        if let problem = stream.problem { problems.append("not HTTP: \(problem)") }
        if stream.problem == nil && !stream.leftover.isEmpty {
            problems.append(closedByServer ? "an incomplete response before the close: \(printable(stream.leftover))"
                                           : "bytes beyond the expected responses: \(printable(stream.leftover))")
        }
        if outcome.end == .timedOut { problems.append("the server neither answered nor closed within \(patience)") }
        if case .failed = outcome.end { problems.append("receive failed: \(outcome.end)") }

        // A reset from the server means it closed with bytes of ours still unread: the kernel
        // then sends RST instead of FIN (RFC 9112 9.6 asks servers to close in stages to avoid
        // it; libmicrohttpd closes at once). Valid requests see that only after libmicrohttpd's
        // own refusals that announce the close (431 for headers past the connection's buffer,
        // 414, 413 for an unparsable length) or when it closed while we were still sending.
        // A broken request may also be dropped without an answer (libmicrohttpd closes on a
        // request line it cannot parse). A close by Mishap's handler shows in the daemon log.
        var label: String
        if doubled != nil {
            label = "libmicrohttpd's doubled error head"
            if outcome.end != .closed && outcome.end != .reset { problems.append("not closed after the doubled error head") }
        } else if finals.isEmpty && outcome.received.isEmpty && closedByServer && headFillsConnectionMemory(fuzzCase) {
            // Closed unanswered: a limitation of libmicrohttpd 0.9.75, not a choice (see below).
            label = "closed unanswered, its head filling the connection's memory"
            return (problems, label)
        } else if outcome.end == .reset {
            let announced = finals.last?.announcesClose == true || outcome.sendError != nil
            if !announced && fuzzCase.expected != nil {
                problems.append("reset by the server without a response announcing a close")
            }
            label = announced ? "reset after \(finals.last.map { "a \($0.status) with close" } ?? "refusing while we sent")"
                              : "reset after a broken request"
        } else if outcome.end == .closed, let wait = outcome.afterHalfClose, wait >= .seconds(1) {
            // The libmicrohttpd FIN race (see `run`) despite the pause before the half-close:
            // the connection was closed by the idle timeout.
            label = "closed by the idle timeout after a half-close"
        } else if outcome.end == .closed {
            label = finals.isEmpty ? "closed without a response" : "closed after responses"
        } else {
            label = "answered, kept open"
        }

        for response in finals {
            problems += generalProblems(response)
        }
        if let expected = fuzzCase.expected {
            let answered = min(finals.count, expected.count)
            for (response, expectation) in zip(finals, expected) {
                if !expectation.statuses.contains(response.status) {
                    problems.append("status \(response.status) where \(expectation.statuses.sorted()) was expected: \(printable(response.body))")
                } else if let problem = expectation.check(response) {
                    problems.append("\(response.status): \(problem)")
                }
            }
            if finals.count > expected.count { problems.append("\(finals.count) responses to \(expected.count) requests") }
            // Fewer answers than requests: fine after a half-close (the server may stop reading),
            // or when the last answer refused a request and announced the close.
            if answered < expected.count, case .awaitResponses = fuzzCase.ending {
                let refusedAndClosed = finals.last.map { $0.status >= 400 && $0.announcesClose } ?? false
                if !refusedAndClosed && outcome.end != .timedOut {
                    problems.append("\(answered) of \(expected.count) requests answered before the connection \(outcome.end)")
                }
            }
        }
        return (problems, label)
    }

    /// How close to the connection's memory a head must come to be closed unanswered. Wider than
    /// the band measured with the head sent at once (`HeadFillingMemoryTests`): how much of its
    /// read buffer libmicrohttpd has grown, and whether it has read the next request yet, depend
    /// on how the bytes arrived, which a loaded machine changes.
    static let connectionMemoryBand = 1024

    /// Whether the case's first request has a head (line, headers, and libmicrohttpd's record of
    /// each header: `ServerConfiguration.bytesPerField`) that nearly fills the connection's
    /// memory, counting or not the bytes pipelined after it (libmicrohttpd may have read them too).
    /// libmicrohttpd 0.9.75 keeps the head there while it builds the response head in the same
    /// memory, and has no call to free it first: a head over Mishap's header limit that fits but
    /// leaves less room than the 431's head needs (a band about 150 bytes wide) cannot be
    /// answered, and the connection is closed unanswered (docs/libmicrohttpd.md, "A head that
    /// fills the connection's memory is closed unanswered").
    static func headFillsConnectionMemory(_ fuzzCase: FuzzCase) -> Bool {
        let bytes = fuzzCase.bytes
        guard let headEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else { return false }
        let lines = bytes[..<headEnd].split(separator: UInt8(ascii: "\n")).count
        let least = headEnd + (lines - 1) * 64
        let most = least + (bytes.count - headEnd)
        let memory = HTTPFuzzTests.configuration.connectionMemoryBytes
        return most >= memory - connectionMemoryBand && least <= memory + connectionMemoryBand
    }

    /// Rules every response obeys: no injected header, valid JSON when it says JSON, an
    /// expected status.
    static func generalProblems(_ response: WireResponse) -> [String] {
        var problems: [String] = []
        if response.has("X-Injected") { problems.append("a request value added a header: \(response.headers)") }
        if response.status == 500, jsonObject(response)?["reason"].flatMap({ $0 as? String })?.hasPrefix(responseHeadTooLarge) == true {
            // Request values echoed into response headers past their limit: answered 500 by design.
        } else if !allowedStatuses.contains(response.status) { problems.append("unexpected status \(response.status): \(printable(response.body))") }
        if response.header("Content-Type")?.hasPrefix("application/json") == true && !response.body.isEmpty {
            if (try? JSONSerialization.jsonObject(with: Data(response.body), options: [.fragmentsAllowed])) == nil {
                problems.append("invalid JSON body: \(printable(response.body))")
            } else if String(validating: response.body, as: UTF8.self) == nil {
                problems.append("JSON body is not UTF-8: \(printable(response.body))")
            }
        }
        return problems
    }
}
