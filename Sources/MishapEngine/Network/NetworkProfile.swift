/// A network a session's answers go through (issue: a bad network per session): latency,
/// bandwidth, loss, a slow close, upload faults and offline windows, applied on top of whatever
/// answers (a scenario rule, a runtime rule, a proxied backend). Made of a preset
/// (`NetworkPresets`) or written out, in a scenario file (`network:`), in an admin call
/// (`PUT /__mishap/network`) or on the command line (`--network`). Immutable and shared: a
/// rule's profile is one object for every request it answers.
public final class NetworkProfile: Sendable, Equatable {
    /// The preset's name (`edge`), or nil for a profile written out.
    public let name: String?
    /// Added to every answer's wait (on top of a rule's `delay`); nil: none.
    public let latency: NetworkLatency?
    /// Up to this many milliseconds more, drawn uniformly per request (and per piece with
    /// `latencyPerChunk`).
    public let jitterMilliseconds: Int
    /// The latency is also waited before each piece the bandwidth sends, not only before the first.
    public let latencyPerChunk: Bool
    /// How fast the response is sent, bytes per second; nil: as fast as the socket takes it.
    public let downBytesPerSecond: Int?
    /// How fast the request body is read, bytes per second; nil: as fast as it comes.
    public let upBytesPerSecond: Int?
    /// The fraction of requests (0...1) answered by a connection reset before any byte.
    public let loss: Double
    /// The response is cut by a reset after this many bytes of its body (or this fraction of it).
    public let resetAfter: ByteMark?
    /// The answer is complete, but the connection is closed only this many milliseconds later.
    public let slowCloseMilliseconds: Int
    /// What happens to the request body on its way in.
    public let upload: UploadFault?
    /// Set at runtime: for this many milliseconds from when the profile was set, every request
    /// of the session is reset at once; then the network comes back (the rest of the profile
    /// stays). In a file or as a server default it is refused (offline from when?).
    public let offlineMilliseconds: Int?

    public init(name: String? = nil, latency: NetworkLatency? = nil, jitterMilliseconds: Int = 0, latencyPerChunk: Bool = false,
                downBytesPerSecond: Int? = nil, upBytesPerSecond: Int? = nil, loss: Double = 0, resetAfter: ByteMark? = nil,
                slowCloseMilliseconds: Int = 0, upload: UploadFault? = nil, offlineMilliseconds: Int? = nil) {
        self.name = name
        self.latency = latency
        self.jitterMilliseconds = jitterMilliseconds
        self.latencyPerChunk = latencyPerChunk
        self.downBytesPerSecond = downBytesPerSecond
        self.upBytesPerSecond = upBytesPerSecond
        self.loss = loss
        self.resetAfter = resetAfter
        self.slowCloseMilliseconds = slowCloseMilliseconds
        self.upload = upload
        self.offlineMilliseconds = offlineMilliseconds
    }

    /// Whether the profile changes nothing (the `none` preset: a session on a perfect network
    /// even where a rule or the server's default names one).
    public var isNeutral: Bool {
        latency == nil && jitterMilliseconds == 0 && downBytesPerSecond == nil && upBytesPerSecond == nil && loss == 0
            && resetAfter == nil && slowCloseMilliseconds == 0 && upload == nil && offlineMilliseconds == nil
    }

    public static func == (a: NetworkProfile, b: NetworkProfile) -> Bool {
        a.name == b.name && a.latency == b.latency && a.jitterMilliseconds == b.jitterMilliseconds
            && a.latencyPerChunk == b.latencyPerChunk && a.downBytesPerSecond == b.downBytesPerSecond
            && a.upBytesPerSecond == b.upBytesPerSecond && a.loss == b.loss && a.resetAfter == b.resetAfter
            && a.slowCloseMilliseconds == b.slowCloseMilliseconds && a.upload == b.upload
            && a.offlineMilliseconds == b.offlineMilliseconds
    }
}

/// How long a network takes to carry an answer's first byte, drawn per request.
public enum NetworkLatency: Sendable, Equatable {
    /// Always this many milliseconds.
    case fixed(Int)
    /// Drawn uniformly from the range.
    case uniform(ClosedRange<Int>)
    /// Drawn from a normal distribution (below 0 counts as 0).
    case normal(meanMilliseconds: Int, deviationMilliseconds: Int)
    /// Drawn from a log-normal distribution: half the draws below `median`, and about two in
    /// three within `median / spread ... median * spread` (`spread`, at least 1, is the
    /// geometric standard deviation). Long tails, as real networks have.
    case logNormal(medianMilliseconds: Int, spread: Double)
}

/// Where in a body something happens: after a number of bytes, or a fraction of the body.
public enum ByteMark: Sendable, Equatable {
    case bytes(Int)
    /// A fraction of the body, 0...1 (`"40%"` is 0.4).
    case fraction(Double)

    /// The byte count for a body of `size` bytes.
    public func bytes(of size: Int) -> Int {
        switch self {
        case .bytes(let count): return count
        case .fraction(let fraction): return Int((Double(size) * fraction).rounded(.down))
        }
    }
}

/// What happens to a request body on its way in.
public enum UploadFault: Sendable, Equatable {
    /// Stop reading after this many bytes: the upload stalls until the client gives up.
    case stallAfterBytes(Int)
    /// Reset the connection once this many bytes are read.
    case resetAfterBytes(Int)
    /// Answer with this status (401, 413, ...) as soon as the head is read, before the body;
    /// a client sending `Expect: 100-continue` gets it instead of `100 Continue`.
    case answerEarly(Int)
}
