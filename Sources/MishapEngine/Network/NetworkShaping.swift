/// What a network profile does to one answer, drawn for it (`NetworkProfile.shaping`): the
/// server carries it out on the socket. Its latency is already in the plan's
/// `delayMilliseconds`, and a reset before any byte (loss, offline) is already the plan's
/// `fault`; what is left here is what happens while the answer is sent. Immutable; nil on a
/// plan for an answer no profile touches.
public final class NetworkShaping: Sendable {
    /// The profile's name for the journal and the log (`edge`, or `custom`).
    public let profile: String
    /// The latency added before the answer (already in the plan's delay), for the journal.
    public let addedLatencyMilliseconds: Int
    /// Send the body at this many bytes per second; nil: at once.
    public let downBytesPerSecond: Int?
    /// Wait this long before each piece sent at `downBytesPerSecond` after the first (the
    /// profile's `latencyPerChunk`), plus up to `chunkJitterMilliseconds` drawn per piece.
    public let chunkLatencyMilliseconds: Int
    public let chunkJitterMilliseconds: Int
    /// Reset the connection after this many bytes of the body (the server resolves a fraction
    /// against the body it sends, which for an upstream's answer is known only then).
    public let resetAfter: ByteMark?
    /// After the last byte, keep the connection open this long before closing it.
    public let slowCloseMilliseconds: Int
    /// What the plan's reset before any byte stands for (`loss`, `offline`), for the journal;
    /// nil when the profile did not reset the answer.
    public let resetReason: String?
    /// The profile's latency and jitter, drawn again for each message a WebSocket sends (a
    /// message crosses the network as an answer does); nil and 0 when it has none.
    public let messageLatency: NetworkLatency?
    public let messageJitterMilliseconds: Int

    public init(profile: String, addedLatencyMilliseconds: Int = 0, downBytesPerSecond: Int? = nil,
                chunkLatencyMilliseconds: Int = 0, chunkJitterMilliseconds: Int = 0, resetAfter: ByteMark? = nil,
                slowCloseMilliseconds: Int = 0, resetReason: String? = nil, messageLatency: NetworkLatency? = nil,
                messageJitterMilliseconds: Int = 0) {
        self.profile = profile
        self.addedLatencyMilliseconds = addedLatencyMilliseconds
        self.downBytesPerSecond = downBytesPerSecond
        self.chunkLatencyMilliseconds = chunkLatencyMilliseconds
        self.chunkJitterMilliseconds = chunkJitterMilliseconds
        self.resetAfter = resetAfter
        self.slowCloseMilliseconds = slowCloseMilliseconds
        self.resetReason = resetReason
        self.messageLatency = messageLatency
        self.messageJitterMilliseconds = messageJitterMilliseconds
    }

    /// Whether the server has anything to do on the socket beyond the plan's delay and fault.
    public var shapesDelivery: Bool {
        downBytesPerSecond != nil || resetAfter != nil || slowCloseMilliseconds > 0
    }

    /// Whether a stream (events or a WebSocket) has anything to do beyond the plan's delay and
    /// fault: what `shapesDelivery` says, or a latency per piece or per message. A plain answer
    /// pays its latency once, in the plan's delay; a stream's later pieces pay it again.
    public var shapesStream: Bool {
        shapesDelivery || chunkLatencyMilliseconds > 0 || chunkJitterMilliseconds > 0 || messageLatency != nil
            || messageJitterMilliseconds > 0
    }
}

/// What a network profile does to a request body on its way in, asked for by the server as soon
/// as a head that declares a body arrives (`Responder.uploadShaping(for:)`).
public struct UploadShaping: Sendable {
    /// Read the body at this many bytes per second; nil: as fast as it comes.
    public var upBytesPerSecond: Int?
    /// Stall, reset, or answer early.
    public var fault: UploadFault?
    /// For `answerEarly`: the plan to queue at once (already noted by the responder).
    public var earlyAnswer: ResponsePlan?

    public init(upBytesPerSecond: Int? = nil, fault: UploadFault? = nil, earlyAnswer: ResponsePlan? = nil) {
        self.upBytesPerSecond = upBytesPerSecond
        self.fault = fault
        self.earlyAnswer = earlyAnswer
    }
}
