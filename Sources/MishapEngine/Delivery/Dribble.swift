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
