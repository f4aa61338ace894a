import Dispatch
import Logging

/// Why the serving port could not be taken down or brought back.
public enum GoingDownError: Error, CustomStringConvertible, Equatable {
    /// The server was not configured to go down (`ServerConfiguration.canGoDown`).
    case notEnabled
    /// The server is not running.
    case notRunning
    /// The duration is not between 1 ms and `HTTPServer.longestDown`.
    case durationOutOfRange(milliseconds: Int)
    /// The port could not be bound again (another process took it); the server stays down.
    case cannotListenAgain(port: UInt16, reason: String)

    public var description: String {
        switch self {
        case .notEnabled:
            "this server cannot go down: it was not started with its own listening socket (canGoDown)"
        case .notRunning:
            "the server is not running"
        case .durationOutOfRange(let milliseconds):
            "cannot go down for \(milliseconds) ms: from 1 ms to a day"
        case .cannotListenAgain(let port, let reason):
            "cannot listen on port \(port) again: \(reason)"
        }
    }
}

/// Taking the serving port down and bringing it back (docs/refused-connections.md).
extension HTTPServer {
    /// The longest a server stays down at one time: a day.
    public static let longestDown: Duration = .seconds(86_400)
    /// How often coming back is tried again when the port cannot be bound.
    static let comeBackRetry: Duration = .milliseconds(250)

    /// Whether the server can go down: started with `canGoDown`, and running.
    public var canGoDown: Bool { ownListener != nil && port != nil }

    /// Whether the serving port is down: new connections are refused.
    public var isDown: Bool { ownListener?.isDown ?? false }

    /// While down, how long until the port comes back by itself.
    public var downRemaining: Duration? {
        guard let until = ownListener?.downUntil else { return nil }
        return max(.zero, until - .now)
    }

    /// Takes the serving port down for `forMilliseconds`: the listening socket is closed, so new
    /// connections are refused (`ECONNREFUSED`); requests in flight finish; connections idle
    /// between requests are closed, and so is each one as its request ends. When the time is
    /// up the port comes back by itself. Called again while down, the new duration replaces the
    /// old one: down until now plus the new duration (shorter or longer).
    public func goDown(forMilliseconds milliseconds: Int) throws {
        guard let listener = ownListener else { throw GoingDownError.notEnabled }
        guard milliseconds >= 1, Duration.milliseconds(milliseconds) <= Self.longestDown else {
            throw GoingDownError.durationOutOfRange(milliseconds: milliseconds)
        }
        let went = listener.goDown(for: .milliseconds(milliseconds)) { [weak self] generation in
            self?.comeBackWhenDue(generation: generation)
        }
        guard went else { throw GoingDownError.notRunning }
        logger.info("serving port \(listener.port) down for \(milliseconds) ms: new connections are refused")
    }

    /// Brings the serving port back at once (nothing happens when it is up). Throws when the port
    /// cannot be bound again: the server stays down, and its timer, if any, keeps trying.
    public func comeBack() throws {
        guard let listener = ownListener else { throw GoingDownError.notEnabled }
        let wasDown = listener.isDown
        do {
            try listener.comeBack()
        } catch let error as ServerError {
            throw GoingDownError.cannotListenAgain(port: listener.port, reason: error.reason)
        }
        if wasDown { logger.info("serving port \(listener.port) back up") }
    }

    /// The timer of a going down: brings the port back unless a later going down replaced it,
    /// trying again every `comeBackRetry` while the port cannot be bound.
    private func comeBackWhenDue(generation: Int) {
        guard let listener = ownListener else { return }
        do {
            try listener.comeBack(ifGeneration: generation)
            if !listener.isDown { logger.info("serving port \(listener.port) back up") }
        } catch {
            logger.error("serving port \(listener.port) stays down: \(error); trying again")
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.comeBackRetry / .milliseconds(1)))) { [weak self] in
                self?.comeBackWhenDue(generation: generation)
            }
        }
    }
}

extension ServerError {
    /// The system's reason, without the address.
    var reason: String {
        switch self {
        case .unresolvableHost(let host): "cannot resolve host '\(host)'"
        case .startFailed(_, _, let reason): reason
        }
    }
}
