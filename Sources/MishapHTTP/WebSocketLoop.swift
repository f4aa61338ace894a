#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD
import CMicroHTTPDShim
import Logging
import MishapEngine
import MishapSupport
import Synchronization

/// Whom a socket tells of its messages and its end: the request observer, with the completion
/// tag of the request that was upgraded.
struct WebSocketReporter {
    let tag: UInt64
    let observer: any RequestObserver
}

/// Every upgraded (WebSocket) connection of a server, played on one thread of Mishap's own:
/// poll over the sockets and a wake pipe, with the scripts' delays as poll's timeout. No
/// libmicrohttpd worker thread is held by a socket. The thread starts with the first upgrade
/// and ends when the server stops, closing every socket first (a close frame 1001, then
/// libmicrohttpd's close action, before the daemon stops).
final class WebSocketLoop: @unchecked Sendable {
    /// Upgrades beyond this many open sockets are refused with 503.
    static let maximumConnections = 512
    /// The limit in force: `maximumConnections`, lowered by tests.
    let connectionLimit = Atomic<Int>(WebSocketLoop.maximumConnections)

    enum Finish {
        /// A FIN after the close handshake (or the client's own close).
        case graceful
        /// A FIN without a close frame (`drop`).
        case drop
        /// A TCP reset (`reset`).
        case reset
    }

    // The connections in `arriving` are touched by the thread only once taken from here.
    private struct Shared: @unchecked Sendable {
        /// Scripts waiting for their connection's upgrade, keyed by the connection's pointer,
        /// with when they were expected. A 101 that is never written (the client left) never
        /// calls the handler: entries older than a minute are dropped as new ones come.
        var expected: [UInt: (script: WebSocketScript, reporter: WebSocketReporter?, network: NetworkShaping?, since: Int64)] = [:]
        /// Connections upgraded and not yet taken by the thread.
        var arriving: [WebSocketConnection] = []
        var thread: OwnThread?
        var wake: (read: Int32, write: Int32)?
        var stopping = false
        /// Open sockets: arriving and played ones.
        var open = 0
    }
    private let shared = Mutex(Shared())
    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// Open upgraded sockets.
    var openConnections: Int { shared.withLock { $0.open } }

    /// Remembers the script for `connection`, whose 101 answer is about to be queued, when
    /// fewer than `limit` sockets are open or expected; false (nothing remembered) otherwise.
    /// Upgrades answered but not yet handed over count: checking open sockets alone let a
    /// client whose 101 had come, but whose socket the loop had not yet taken, go uncounted.
    /// `reporter`, when given, is told of the socket's messages and of its end; `network`, when
    /// given, shapes the frames the socket sends (`WebSocketShaper`).
    func expect(_ script: WebSocketScript, reporter: WebSocketReporter? = nil, network: NetworkShaping? = nil,
                for connection: OpaquePointer, limit: Int) -> Bool {
        let now = MonotonicClock.milliseconds()
        return shared.withLock { shared in
            if shared.expected.count >= 64 { shared.expected = shared.expected.filter { now - $0.value.since < 60_000 } }
            guard shared.open + shared.expected.count < limit else { return false }
            shared.expected[Self.key(connection)] = (script, reporter, network, now)
            return true
        }
    }

    /// Forgets the script expected for `connection`, whose 101 could not be queued.
    func forget(_ connection: OpaquePointer) {
        _ = shared.withLock { $0.expected.removeValue(forKey: Self.key(connection)) }
    }

    private static func key(_ connection: OpaquePointer) -> UInt {
        UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(connection)))
    }

    /// Takes an upgraded socket (on a libmicrohttpd worker thread, from the upgrade handler):
    /// handed to the loop's thread, which starts if it has not yet.
    func adopt(connection: OpaquePointer, socket: Int32, handle: OpaquePointer, extra: [UInt8]) {
        let flags = fcntl(socket, F_GETFL, 0)
        _ = fcntl(socket, F_SETFL, flags | O_NONBLOCK)
        #if !os(Linux)
        var on: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let adopted = shared.withLock { shared -> Bool in
            guard let expected = shared.expected.removeValue(forKey: Self.key(connection)), !shared.stopping else { return false }
            if shared.thread == nil {
                guard startLocked(&shared) else { return false }
            }
            shared.arriving.append(WebSocketConnection(socket: socket, handle: handle, script: expected.script, extra: extra,
                                                       now: MonotonicClock.milliseconds(), reporter: expected.reporter,
                                                       network: expected.network))
            shared.open += 1
            if let wake = shared.wake { Self.poke(wake.write) }
            return true
        }
        if !adopted {
            // Stopping (or no thread could start): the socket is let go at once.
            Socket.shutDown(socket)
            _ = mishap_upgrade_close(handle)
        }
    }

    private func startLocked(_ shared: inout Shared) -> Bool {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL, 0) | O_NONBLOCK) }
        let wakeRead = ends[0]
        guard let thread = OwnThread({ [self] in run(wake: wakeRead) }) else {
            close(ends[0])
            close(ends[1])
            return false
        }
        shared.wake = (ends[0], ends[1])
        shared.thread = thread
        return true
    }

    private static func poke(_ descriptor: Int32) {
        var byte: UInt8 = 1
        _ = write(descriptor, &byte, 1)
    }

    /// Takes upgrades again after a `stop` (the server started anew).
    func reopen() {
        shared.withLock { $0.stopping = false }
    }

    /// Closes every socket (close 1001, then libmicrohttpd's close action) and ends the thread;
    /// called before the daemon stops. Later upgrades are let go at once.
    func stop() {
        let (thread, wake) = shared.withLock { shared -> (OwnThread?, (read: Int32, write: Int32)?) in
            shared.stopping = true
            shared.expected.removeAll()
            if let wake = shared.wake { Self.poke(wake.write) }
            return (shared.thread, shared.wake)
        }
        thread?.join()
        if let wake {
            close(wake.read)
            close(wake.write)
        }
        shared.withLock {
            $0.thread = nil
            $0.wake = nil
        }
    }

    /// The thread: poll, read, write, run the timers, let go of finished sockets.
    private func run(wake: Int32) {
        var connections: [WebSocketConnection] = []
        var descriptors: [pollfd] = []
        while true {
            let (arriving, stopping) = shared.withLock { shared -> ([WebSocketConnection], Bool) in
                defer { shared.arriving.removeAll() }
                return (shared.arriving, shared.stopping)
            }
            connections.append(contentsOf: arriving)
            let now = MonotonicClock.milliseconds()
            for connection in arriving { connection.begin(now: now) }
            if stopping {
                for connection in connections { connection.goAway() }
                letGo(connections)
                return
            }
            // Finished ones are let go before polling again.
            // (A finished one whose frames still wait on its network profile stays till they go.)
            let finished = connections.filter { $0.canLetGo }
            if !finished.isEmpty {
                connections.removeAll { $0.canLetGo }
                letGo(finished)
                continue
            }
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0))
            var timeout: Int64 = -1
            for connection in connections {
                let events = Int16(POLLIN) | (connection.wantsToWrite ? Int16(POLLOUT) : 0)
                descriptors.append(pollfd(fd: connection.socket, events: events, revents: 0))
                if let deadline = connection.nextDeadline {
                    let wait = max(0, deadline - now)
                    timeout = timeout < 0 ? wait : min(timeout, wait)
                }
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), Int32(clamping: timeout))
            if ready < 0 && errno != EINTR {
                logger.error("WebSocket loop: poll failed (errno \(errno))")
                usleep(10_000)
            }
            if descriptors[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wake, &drain, drain.count) > 0 {}
            }
            for (index, connection) in connections.enumerated() {
                let revents = descriptors[index + 1].revents
                if revents & Int16(POLLOUT) != 0 { connection.writable() }
                if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { connection.readable() }
            }
            let later = MonotonicClock.milliseconds()
            for connection in connections { connection.runTimers(now: later) }
        }
    }

    /// Lets go of sockets the loop no longer polls: each one's close action, exactly once.
    private func letGo(_ finished: [WebSocketConnection]) {
        for connection in finished { connection.release() }
        shared.withLock { $0.open -= finished.count }
    }
}
