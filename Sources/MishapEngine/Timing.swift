/// How long to wait before answering.
public enum Delay: Sendable, Equatable {
    /// Always this many milliseconds.
    case fixed(Int)
    /// A number of milliseconds drawn uniformly from the range for each request.
    case uniform(ClosedRange<Int>)

    func milliseconds(_ random: RandomSource) -> Int {
        switch self {
        case .fixed(let value): return value
        case .uniform(let range): return random.int(in: range)
        }
    }
}

/// Sending the body in pieces spread over a duration.
public struct Dribble: Sendable, Equatable {
    /// How many pieces the body is cut into.
    public var chunks: Int
    /// Milliseconds from the first piece to the last.
    public var milliseconds: Int

    public init(chunks: Int, milliseconds: Int) {
        self.chunks = chunks
        self.milliseconds = milliseconds
    }
}

/// A failure of the connection itself rather than of the response.
public enum Fault: String, Sendable, CaseIterable {
    /// The client sees a TCP reset (ECONNRESET).
    case reset
    /// The connection closes with no response bytes.
    case close
    /// Bytes that are not HTTP (the body, or random bytes), then a close.
    case garbage
    /// Headers promise more body than is sent, then a close.
    case truncate
    /// A chunked body that stops without its terminating chunk.
    case truncateChunked = "truncate-chunked"
    /// A `Content-Length` smaller than the body that follows.
    case contentLengthMismatch = "content-length-mismatch"
}
