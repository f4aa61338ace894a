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
