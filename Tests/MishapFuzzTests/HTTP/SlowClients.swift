import Foundation
#if canImport(Glibc)
import Glibc
#endif
import MishapTestSupport

/// A few clients that send a request one byte at a time, 100 to 300 ms apart (slowloris),
/// alongside the fuzz: the server must answer the ones that finish and close the one that
/// stalls once its idle timeout passes.
enum SlowClients {
    static let count = 4

    static func run(_ index: Int, seed: UInt64, port: UInt16, board: FuzzBoard) {
        var random = SeededRandom(seed: seed, case: -1 - index)
        let name = "slow\(index)"
        let stalls = index == count - 1
        let request = Array("GET /echo?name=\(name) HTTP/1.0\r\n\r\n".utf8)
        let label = "slowloris \(index)"
        let socket: RawHTTPConnection
        do { socket = try FuzzRunner.connect(port: port) } catch {
            board.fail(label, "could not connect: \(error)")
            return
        }
        defer { socket.close() }
        let sent = stalls ? request.prefix(8) : request[...]
        for byte in sent {
            if let code = socket.write([byte]) {
                board.fail(label, "the server stopped reading a trickled request (errno \(code))")
                return
            }
            usleep(UInt32(random.int(100...300)) * 1000)
        }
        var received: [UInt8] = []
        let started = ContinuousClock.now
        let end = socket.read(into: &received, until: .now + FuzzRunner.patience + .seconds(2))
        let stream = WireReader.read(received, atEnd: end == .closed || end == .reset)
        if stalls {
            // Idle past the timeout: closed without an answer (or with a well-formed one).
            if end != .closed || stream.problem != nil || !stream.leftover.isEmpty {
                board.fail(label, "a stalled trickle was not closed cleanly: \(end), \(printable(received))")
            }
            board.note("slowloris stalled, closed after \(started.duration(to: .now))")
            return
        }
        let response = stream.responses.first { !$0.isInterim }
        let json = response.flatMap(jsonObject)
        if end != .closed || stream.problem != nil || response?.status != 200 || json?["name"] as? String != name {
            board.fail(label, "a trickled request was not answered: \(end), \(stream.problem ?? ""), \(printable(received))")
        }
        board.note("slowloris answered")
    }
}
