#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD
import CMicroHTTPDShim
import MishapEngine
import MishapSupport

/// One upgraded connection playing its script, touched only by the WebSocket loop's thread.
final class WebSocketConnection {
    let socket: Int32
    /// libmicrohttpd's handle, for the one close action (`mishap_upgrade_close`).
    private let handle: OpaquePointer
    let script: WebSocketScript

    /// Bytes read and not yet a whole frame.
    private var input: [UInt8] = []
    /// Bytes to write, from `written` on.
    var output: [UInt8] = []
    var written = 0
    /// A fragmented message being put together, and its opcode.
    private var fragments: [UInt8] = []
    private var fragmentOpcode: UInt8?

    enum Phase {
        /// Messages flow.
        case open
        /// The server sent its close frame (or a broken frame): it waits for the client's close
        /// frame or its close of the socket, at most until the deadline.
        case closing(deadline: Int64)
        /// Done: the loop lets go of the socket once what is left to write is written (or
        /// given up on).
        case finished(WebSocketLoop.Finish)
    }
    var phase = Phase.open
    private var pingsStalled = false

    /// The next scripted message and when it is due; then when `end` is due.
    private var nextSend = 0
    private var nextSendAt: Int64
    private var endAt: Int64?
    /// Replies waiting for their delay, in the order they are due.
    private var replyQueue: [(at: Int64, message: WebSocketMessage)] = []
    /// Told of each message and of the end (the journal), when the request was journaled.
    private let reporter: WebSocketReporter?
    /// How the socket ends: the first cause noted.
    private var ending: WebSocketOutcome?
    /// The network profile's latency, bandwidth and reset on the frames sent; nil: none, or
    /// let go of (the client left, the server is stopping). Its reset waits on `drain`, looked
    /// at again at `drainCheckAt`.
    var shaper: WebSocketShaper?
    let drain: SocketDrain
    var drainCheckAt: Int64?

    /// At most this many bytes wait to be written: a client that does not read while it asks
    /// for more is dropped.
    static let maximumOutputBytes = 8 << 20
    /// How long the server waits for a client's close frame after its own.
    static let closingMilliseconds: Int64 = 2_000

    init(socket: Int32, handle: OpaquePointer, script: WebSocketScript, extra: [UInt8], now: Int64, reporter: WebSocketReporter? = nil,
         network: NetworkShaping? = nil) {
        self.socket = socket
        shaper = network.flatMap { WebSocketShaper($0, script: script) }
        drain = SocketDrain(socket: socket)
        if shaper?.resetAt != nil { drain.start() }
        self.reporter = reporter
        self.handle = handle
        self.script = script
        input = extra
        nextSendAt = now + Int64(script.send.first?.delayMilliseconds ?? 0)
        if script.send.isEmpty, let end = script.end { endAt = now + Int64(end.afterMilliseconds) }
    }

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    var wantsToWrite: Bool { written < output.count }

    /// Whether the loop may let go of the socket: finished, and no frame still waiting for the
    /// network profile to let it go.
    var canLetGo: Bool { isFinished && (shaper?.isEmpty ?? true) }

    /// The earliest moment something is due (a message, a reply, the end, the closing deadline).
    var nextDeadline: Int64? {
        var earliest: Int64?
        switch phase {
        case .finished: break
        case .closing(let deadline): earliest = deadline
        case .open:
            earliest = replyQueue.first?.at
            if nextSend < script.send.count { earliest = min(earliest ?? .max, nextSendAt) }
            if let endAt { earliest = min(earliest ?? .max, endAt) }
        }
        if let shaped = shaper?.nextDeadline { earliest = min(earliest ?? .max, shaped) }
        if let drainCheckAt { earliest = min(earliest ?? .max, drainCheckAt) }
        return earliest
    }

    /// Starts the script once the loop has the socket: what is due now is sent, then the
    /// frames the client sent with its handshake (libmicrohttpd's `extra_in`) are answered.
    func begin(now: Int64) {
        runTimers(now: now)
        if !input.isEmpty { handleFrames() }
    }

    // MARK: Time

    /// Sends what is due at `now`.
    func runTimers(now: Int64) {
        if shaper != nil, runShaper(now: now) { return }
        switch phase {
        case .finished: return
        case .closing(let deadline):
            if now >= deadline { phase = .finished(.graceful) }
            return
        case .open: break
        }
        while nextSend < script.send.count, nextSendAt <= now {
            let message = script.send[nextSend]
            enqueue(message)
            nextSend += 1
            if nextSend < script.send.count {
                nextSendAt = now + Int64(script.send[nextSend].delayMilliseconds)
            } else if let end = script.end {
                endAt = now + Int64(end.afterMilliseconds)
            }
        }
        while let first = replyQueue.first, first.at <= now {
            replyQueue.removeFirst()
            enqueue(first.message)
        }
        if let at = endAt, at <= now {
            endAt = nil
            end()
        }
    }

    private func enqueue(_ message: WebSocketMessage) {
        report(.sent, message.isText ? .text : .binary, message.payload)
        queue(WebSocketFrames.frame(opcode: message.isText ? WebSocketFrames.text : WebSocketFrames.binary, message.payload))
    }

    /// The script's `end`.
    private func end() {
        guard let ending = script.end?.ending else { return }
        switch ending {
        case .close(let code, let reason):
            sendClose(code: code, reason: reason, how: .close)
            phase = .closing(deadline: closingDeadline())
        case .drop:
            noteEnding(WebSocketOutcome(how: .drop))
            phase = .finished(.drop)
        case .stallPings:
            pingsStalled = true
        case .garbage:
            // Reserved bits 1-3 set and the reserved opcode 3: no client may accept it.
            noteEnding(WebSocketOutcome(how: .garbage))
            queue([0xF3, 0x04] + Array("bad!".utf8))
            phase = .closing(deadline: closingDeadline())
        case .oversized:
            // A binary frame announcing 2^62 bytes, and a few of them.
            noteEnding(WebSocketOutcome(how: .oversized))
            queue(WebSocketFrames.header(opcode: WebSocketFrames.binary, length: 1 << 62) + [UInt8](repeating: 0x78, count: 16))
            phase = .closing(deadline: closingDeadline())
        case .reset:
            // A text message announcing 1,024 bytes, half of them sent, then a reset.
            noteEnding(WebSocketOutcome(how: .reset))
            queue(WebSocketFrames.header(opcode: WebSocketFrames.text, length: 1_024) + [UInt8](repeating: 0x78, count: 512))
            phase = .finished(.reset)
        }
    }

    // MARK: Reading

    /// Reads what the socket has and answers it.
    func readable() {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                // A finished socket whose last frames wait on its network profile reads and
                // drops what comes, so a client cannot grow its input meanwhile.
                if isFinished { continue }
                input.append(contentsOf: buffer[0..<count])
                if input.count > 2 * WebSocketScript.maximumMessageBytes + 64 { break }
                if count < buffer.count { break }
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { break }
            // The client closed its side, or reset: nothing more will come (nor go).
            shaper = nil
            handleFrames()
            if !isFinished {
                noteEnding(WebSocketOutcome(how: .clientLeft))
                phase = .finished(.graceful)
            }
            return
        }
        handleFrames()
    }

    private func handleFrames() {
        var consumed = 0
        defer { if consumed > 0 { input.removeFirst(consumed) } }
        while !isFinished {
            switch WebSocketFrames.read(input[consumed...], limit: WebSocketScript.maximumMessageBytes) {
            case .needMore:
                return
            case .failure(let code, let reason):
                fail(code: code, reason: reason)
                return
            case .frame(let frame, let length):
                consumed += length
                handle(frame)
            }
        }
    }

    private func handle(_ frame: WebSocketFrames.Frame) {
        switch frame.opcode {
        case WebSocketFrames.ping:
            report(.received, .ping, frame.payload)
            if case .open = phase, !pingsStalled {
                report(.sent, .pong, frame.payload)
                queue(WebSocketFrames.frame(opcode: WebSocketFrames.pong, frame.payload))
            }
        case WebSocketFrames.pong:
            report(.received, .pong, frame.payload)
        case WebSocketFrames.close:
            report(.received, .close, frame.payload)
            let code = frame.payload.count >= 2 ? Int(frame.payload[0]) << 8 | Int(frame.payload[1]) : nil
            noteEnding(WebSocketOutcome(how: .close, by: "client", code: code,
                                       reason: frame.payload.count > 2 ? String(decoding: frame.payload.dropFirst(2), as: UTF8.self) : nil))
            if case .open = phase {
                report(.sent, .close, frame.payload.prefix(2))
                // The client closes: its code echoed back (none when it gave none), then the
                // server closes the TCP connection, as RFC 6455 has it.
                queue(WebSocketFrames.frame(opcode: WebSocketFrames.close, Array(frame.payload.prefix(2))))
            }
            phase = .finished(.graceful)
        case WebSocketFrames.continuation:
            guard let opcode = fragmentOpcode else { return fail(code: 1002, reason: "a continuation without a message") }
            guard fragments.count + frame.payload.count <= WebSocketScript.maximumMessageBytes else {
                return fail(code: 1009, reason: "message larger than \(WebSocketScript.maximumMessageBytes) bytes")
            }
            fragments.append(contentsOf: frame.payload)
            if frame.fin {
                let payload = fragments
                fragments = []
                fragmentOpcode = nil
                received(payload, isText: opcode == WebSocketFrames.text)
            }
        default:
            guard fragmentOpcode == nil else { return fail(code: 1002, reason: "a new message inside a fragmented one") }
            if frame.fin {
                received(frame.payload, isText: frame.opcode == WebSocketFrames.text)
            } else {
                fragmentOpcode = frame.opcode
                fragments = frame.payload
            }
        }
    }

    /// A whole message from the client: the first matching reply is queued.
    private func received(_ payload: [UInt8], isText: Bool) {
        report(.received, isText ? .text : .binary, payload)
        guard case .open = phase else { return }
        if isText, String(validating: payload, as: UTF8.self) == nil {
            return fail(code: 1007, reason: "a text message that is not UTF-8")
        }
        guard let messages = script.reply(to: payload, isText: isText) else { return }
        var at = max(MonotonicClock.milliseconds(), replyQueue.last?.at ?? 0)
        for message in messages {
            at += Int64(message.delayMilliseconds)
            replyQueue.append((at, message))
        }
        runTimers(now: MonotonicClock.milliseconds())
    }

    /// The client broke the protocol: a close frame with the code, then the closing wait.
    private func fail(code: Int, reason: String) {
        guard case .open = phase else {
            phase = .finished(.graceful)
            return
        }
        sendClose(code: code, reason: reason, how: .close)
    }

    /// Sends the server's close frame, noted as the way the socket ends unless one is already,
    /// then waits for the client's.
    private func sendClose(code: Int, reason: String, how: WebSocketOutcome.How) {
        var payload = [UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)]
        payload += Array(reason.utf8)
        report(.sent, .close, payload)
        noteEnding(WebSocketOutcome(how: how, by: "server", code: code, reason: reason))
        queue(WebSocketFrames.closeFrame(code: code, reason: reason))
        if case .open = phase {
            phase = .closing(deadline: closingDeadline())
        }
    }

    // MARK: Reporting

    /// Tells the reporter of a message passing (its first 256 bytes).
    private func report(_ direction: WebSocketMessageNote.Direction, _ kind: WebSocketMessageNote.Kind, _ payload: some Collection<UInt8>) {
        guard let reporter else { return }
        reporter.observer.webSocketMessage(tag: reporter.tag, WebSocketMessageNote(direction: direction, kind: kind, payload: payload))
    }

    func noteEnding(_ how: WebSocketOutcome) {
        if ending == nil { ending = how }
    }

    // MARK: Writing

    private func queue(_ bytes: [UInt8]) {
        if written > 0 && written == output.count {
            output.removeAll(keepingCapacity: true)
            written = 0
        }
        guard output.count - written + (shaper?.waitingBytes ?? 0) + bytes.count <= Self.maximumOutputBytes else {
            noteEnding(WebSocketOutcome(how: .clientTooSlow))
            phase = .finished(.drop)
            shaper = nil
            return
        }
        if let shaper {
            let now = MonotonicClock.milliseconds()
            shaper.add(bytes, now: now)
            output.append(contentsOf: shaper.release(now: now))
            // Its reset reached: the loop looks at the socket again at once (`runShaper`).
            if shaper.reachedReset, drainCheckAt == nil { drainCheckAt = now }
        } else {
            output.append(contentsOf: bytes)
        }
        writable()
    }

    /// Writes what it can without blocking.
    func writable() {
        while written < output.count {
            let count = output.withUnsafeBytes { bytes in
                Socket.sendOnce(socket, UnsafeRawBufferPointer(rebasing: bytes[written...]))
            }
            if count > 0 {
                written += count
                continue
            }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
            // The client is gone: what is left is never written.
            written = output.count
            shaper = nil
            if !isFinished {
                noteEnding(WebSocketOutcome(how: .clientLeft))
                phase = .finished(.graceful)
            }
            return
        }
    }

    /// The server is stopping: a close frame (1001, going away) if it fits the socket's buffer.
    func goAway() {
        shaper = nil
        if case .open = phase { sendClose(code: 1001, reason: "server stopping", how: .serverStopped) }
        noteEnding(WebSocketOutcome(how: .serverStopped))
        phase = .finished(.graceful)
    }

    /// How the connection ends once it is finished.
    var finish: WebSocketLoop.Finish {
        if case .finished(let how) = phase { return how }
        return .graceful
    }

    /// Lets go of the socket: the last bytes tried once more, the way it ends (a FIN, or a RST
    /// for `reset`), then libmicrohttpd's close action, exactly once. The loop has already
    /// stopped polling the socket and never touches it again
    /// (docs/libmicrohttpd.md, "Upgraded connections (WebSocket)").
    func release() {
        writable()
        switch finish {
        case .reset:
            Socket.resetOnClose(socket)
        case .graceful, .drop:
            // The FIN goes now, whenever libmicrohttpd gets round to closing the descriptor.
            Socket.shutDown(socket)
        }
        _ = mishap_upgrade_close(handle)
        if let reporter { reporter.observer.webSocketEnded(tag: reporter.tag, ending ?? WebSocketOutcome(how: .clientLeft)) }
    }
}
