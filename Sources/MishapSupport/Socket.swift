/// The socket calls the server makes outside libmicrohttpd, to carry out faults.
public enum Socket {
    /// Sends what the socket takes of `bytes` at once (it may be non-blocking), never raising
    /// SIGPIPE on a closed peer: `MSG_NOSIGNAL` on Linux, `SO_NOSIGPIPE` on the socket elsewhere.
    /// Returns the bytes sent, or -1.
    @discardableResult
    public static func sendOnce(_ socket: Int32, _ bytes: [UInt8]) -> Int {
        #if os(Linux)
        return bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        #else
        var on: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        return bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
        #endif
    }

    /// Makes the socket's close send a TCP reset instead of a FIN (linger on, for 0 seconds).
    public static func resetOnClose(_ socket: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(socket, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }
}
