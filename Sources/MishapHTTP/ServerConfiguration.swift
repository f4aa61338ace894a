import MishapEngine
import MishapSupport

/// How the server listens and what it tolerates.
public struct ServerConfiguration: Sendable {
    /// The address to bind: an IPv4 or IPv6 literal or a host name. Loopback unless told otherwise.
    public var host: String
    /// The TCP port; 0 picks a free one.
    public var port: UInt16
    /// Worker threads, each with its own event loop.
    public var threads: Int
    /// How each worker thread waits for its sockets.
    public var eventLoop: EventLoop
    /// Largest request body read; a larger one is answered 413.
    public var maxBodyBytes: Int
    /// Largest header section (each header counted as `name: value` and its CRLF); a larger one
    /// is answered 431. It also sizes each connection's buffer, so it bounds memory per connection.
    public var maxHeaderBytes: Int
    /// Most connections open at once.
    public var connectionLimit: Int
    /// Seconds an idle connection is kept.
    public var connectionTimeoutSeconds: Int
    /// Seconds a connection has to send a whole request head (request line and headers), from
    /// when it is accepted or its previous request ended, however it trickles; 0 never closes
    /// one for that. While this is on, connections still sending a head are also closed,
    /// oldest first, to keep a tenth of `connectionLimit` free for new clients.
    public var headTimeoutSeconds: Int
    /// HTTPS instead of HTTP, when set.
    public var tls: TLSSettings?
    /// Whether the serving port can be taken down and brought back (`HTTPServer.goDown`): the
    /// server then listens on a socket of its own and hands each connection to libmicrohttpd.
    /// Off by default, so the usual server listens as libmicrohttpd does.
    public var canGoDown: Bool

    public init(
        host: String = "127.0.0.1",
        port: UInt16 = 8080,
        threads: Int = Platform.processorCount,
        maxBodyBytes: Int = 10 << 20,
        maxHeaderBytes: Int = 8 << 10,
        connectionLimit: Int = 4096,
        connectionTimeoutSeconds: Int = 30,
        eventLoop: EventLoop = .auto,
        headTimeoutSeconds: Int = 10,
        tls: TLSSettings? = nil,
        canGoDown: Bool = false
    ) {
        self.host = host
        self.port = port
        self.threads = threads
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderBytes = maxHeaderBytes
        self.connectionLimit = connectionLimit
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.eventLoop = eventLoop
        self.headTimeoutSeconds = headTimeoutSeconds
        self.tls = tls
        self.canGoDown = canGoDown
    }

    /// How libmicrohttpd's worker threads wait for their sockets.
    public enum EventLoop: String, Sendable, CaseIterable {
        /// epoll where libmicrohttpd has it (Linux), else poll.
        case auto
        /// epoll (Linux only): one registration per connection, cheap with many connections.
        case epoll
        /// poll(2), which every platform has: the portable loop, also tested on Linux.
        case poll
    }

    /// The memory libmicrohttpd gives each connection for reading the request line and headers
    /// and writing the response head, which share it: the request header limit, plus
    /// `ResponseHead.maximumHeaderBytes` for a response's headers, plus `bookkeepingBytes`. So a
    /// request with headers at the limit is always answered, even by a response with headers at
    /// theirs. (libmicrohttpd answers 431 itself when headers outgrow it; below that, Mishap
    /// checks the exact limit.)
    public var connectionMemoryBytes: Int { maxHeaderBytes + ResponseHead.maximumHeaderBytes + Self.bookkeepingBytes }

    /// The rest of a connection's memory: the request line, libmicrohttpd's record of each
    /// request header and query parameter (64 bytes apiece), the status line and the headers
    /// libmicrohttpd adds to a response (`Date`, `Content-Length`, `Connection`).
    static let bookkeepingBytes = 8 << 10

    /// What a response head takes beside the response's own headers: the status line, the
    /// headers libmicrohttpd adds (`Date`, `Content-Length` or `Transfer-Encoding`,
    /// `Connection`), the blank line, and the pool's alignment: about 150 bytes, with room to spare.
    static let responseLineBytes = 256
    /// libmicrohttpd's record of each request header and query parameter.
    static let bytesPerField = 64

    /// Whether a request of about this size surely leaves room for a response head at the
    /// limit: `targetBytes` as decoded (counted three times, as if every byte had been
    /// percent-encoded), its headers' bytes and how many headers and query parameters it has.
    func surelyLeavesResponseRoom(targetBytes: Int, headerBytes: Int, fields: Int) -> Bool {
        targetBytes * 3 + headerBytes + 64 + fields * Self.bytesPerField + Self.responseLineBytes
            + ResponseHead.maximumHeaderBytes <= connectionMemoryBytes
    }

    /// The bytes of response headers that fit in a connection's memory beside a request whose
    /// line and headers took `headBytes` as received and that has `fields` headers and query
    /// parameters: libmicrohttpd keeps those while it writes the response head.
    func responseHeaderRoom(headBytes: Int, fields: Int) -> Int {
        let left = connectionMemoryBytes - headBytes - fields * Self.bytesPerField - Self.responseLineBytes
        return max(0, min(ResponseHead.maximumHeaderBytes, left))
    }

    /// The processors online, at least 1.
    public static var processorCount: Int { Platform.processorCount }
}
