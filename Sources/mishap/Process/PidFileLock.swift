import ArgumentParser
import Logging
import MishapSupport

/// A pid file claimed for one server: open, under an exclusive `flock` for as long as the server
/// runs. The lock decides which of two servers started at once with the same pid file runs (the
/// other exits 1), and tells `stop` and `status` that a server holds the file, so the pid in it
/// is that server's and not some process that happens to have that pid. The lock goes with the
/// open file, not with a process: `start` claims the pid file before it starts the server, hands
/// it the descriptor (the lock with it), and exits; the server holds it until it exits, when
/// the system lets go of the lock even after a SIGKILL. A stale pid file, whose lock is free,
/// is taken over.
final class PidFileLock {
    let path: String
    /// The open pid file, which holds the lock.
    let descriptor: Int32
    private var isOpen = true

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    /// Why a pid file cannot be claimed.
    enum ClaimFailure: Error {
        /// It cannot be created, opened or locked, for this reason.
        case cannotWrite(String)
        /// A server holds it: what the file says of that server, when it says something yet.
        case alreadyRunning(PidFile?)

        /// The error line for the pid file at `path`.
        func message(_ path: String) -> String {
            switch self {
            case .cannotWrite(let reason):
                return "mishap: cannot write the pid file \(path): \(reason)"
            case .alreadyRunning(let file?):
                return "mishap: already running (pid \(file.pid), \(file.url ?? "starting")); pid file \(path)"
            case .alreadyRunning(nil):
                return "mishap: already running (a server is starting with the pid file \(path))"
            }
        }
    }

    /// A claimed pid file, and what it said before, when it named a process no server has now.
    struct Claim {
        let lock: PidFileLock
        let replaced: PidFile?
    }

    /// Creates or opens the pid file at `path` and takes its lock, emptied; fails when a server
    /// holds it (waiting up to `patience` when the holder does not look like a server: a server
    /// claiming it a moment ago, or `stop` or `status` looking) or when it cannot be written.
    static func claim(_ path: String, patience: Duration = .milliseconds(500)) -> Result<Claim, ClaimFailure> {
        let deadline = ContinuousClock.now + patience
        while true {
            guard let descriptor = FileDescriptor.open(path, .readWriteCreating) else {
                return .failure(.cannotWrite(Platform.describeLastError()))
            }
            let locked = FileDescriptor.lock(descriptor, exclusive: true)
            guard locked == .locked else {
                FileDescriptor.close(descriptor)
                if case .failed(let reason) = locked { return .failure(.cannotWrite("cannot lock it: \(reason)")) }
                let holder = PidFile.check(path)
                if case .server(let file, _) = holder { return .failure(.alreadyRunning(file)) }
                guard ContinuousClock.now < deadline else {
                    if case .heldByAnother(let file) = holder { return .failure(.alreadyRunning(file)) }
                    return .failure(.alreadyRunning(nil))
                }
                Processes.pause(milliseconds: 10)
                continue
            }
            // Removed (by a server exiting, or stop) or replaced between the open and the lock:
            // the lock is on a file no one else will look at; open the path again.
            guard let opened = FileIdentity(descriptor: descriptor), FileIdentity(path: path) == opened else {
                FileDescriptor.close(descriptor)
                guard ContinuousClock.now < deadline else { return .failure(.alreadyRunning(nil)) }
                continue
            }
            let previous = PidFile.read(descriptor: descriptor, path: path)
            // A server of an earlier version holds no lock but may run.
            if let previous, ProcessIdentity.isAlive(previous.pid), ProcessIdentity.isUnlockedServer(previous.pid, pidFile: path) {
                FileDescriptor.close(descriptor)
                return .failure(.alreadyRunning(previous))
            }
            guard FileDescriptor.rewrite(descriptor, with: []) else {
                let reason = Platform.describeLastError()
                FileDescriptor.close(descriptor)
                return .failure(.cannotWrite(reason))
            }
            return .success(Claim(lock: PidFileLock(path: path, descriptor: descriptor), replaced: previous))
        }
    }

    /// The pid file `start` claimed and handed over as `descriptor`, if that is the file at
    /// `path` with its lock; nil otherwise.
    static func adopt(descriptor: Int32, path: String) -> PidFileLock? {
        guard let handed = FileIdentity(descriptor: descriptor), FileIdentity(path: path) == handed,
              FileDescriptor.lock(descriptor, exclusive: true) == .locked else { return nil }
        FileDescriptor.closeOnExec(descriptor)
        return PidFileLock(path: path, descriptor: descriptor)
    }

    /// Whether some process holds the lock of the pid file open as `descriptor`; nil when locks
    /// do not work there. Looking takes a shared lock for an instant.
    static func isHeld(_ descriptor: Int32) -> Bool? {
        switch FileDescriptor.lock(descriptor, exclusive: false) {
        case .locked:
            FileDescriptor.unlock(descriptor)
            return false
        case .heldElsewhere: return true
        case .failed: return nil
        }
    }

    /// Writes the pid, and the URL once there is one, in place (the lock is on this file: a new
    /// file renamed over it would have none); false on an error.
    func write(pid: ProcessID, url: String?, adminURL: String? = nil) -> Bool {
        let admin = url != nil ? adminURL.map { $0 + "\n" } ?? "" : ""
        return FileDescriptor.rewrite(descriptor, with: Array("\(pid)\n\(url.map { $0 + "\n" } ?? "")\(admin)".utf8))
    }

    /// Removes the pid file, if the path still leads to this one, and lets go of the lock.
    func remove() {
        guard isOpen else { return }
        if let held = FileIdentity(descriptor: descriptor), FileIdentity(path: path) == held { FileSystem.remove(path) }
        FileDescriptor.close(descriptor)
        isOpen = false
    }

    /// Removes the pid file at `path` if no server holds it (a stale one, or a server's that
    /// exited without removing it); true when there is none left.
    @discardableResult
    static func removeStale(_ path: String) -> Bool {
        guard let descriptor = FileDescriptor.open(path, .read) else { return FileDescriptor.lastErrorIsNoSuchFile }
        defer { FileDescriptor.close(descriptor) }
        guard FileDescriptor.lock(descriptor, exclusive: true) == .locked else { return false }
        guard let opened = FileIdentity(descriptor: descriptor), FileIdentity(path: path) == opened else { return true }
        return FileSystem.remove(path)
    }
}

extension PidFileLock {
    /// The pid file of `serve --pid-file`, nil without one. Under `start` (with --ready-fd), the
    /// pid file start claimed is the descriptor after the ready one; otherwise it is claimed
    /// here. Its pid is written at once, the URL once serving. When it cannot be had, says why
    /// and throws `ExitCode.failure`: the server does not run without its pid file.
    static func forServe(_ options: ServeOptions, logger: Logger) throws -> PidFileLock? {
        guard let path = options.pidFile ?? PidFileOption.fromEnvironment else { return nil }
        let lock: PidFileLock
        if let ready = options.readyDescriptor, let handed = adopt(descriptor: ready + 1, path: path) {
            lock = handed
        } else {
            switch claim(path) {
            case .failure(let failure):
                printError(failure.message(path))
                throw ExitCode.failure
            case .success(let claim):
                if let stale = claim.replaced { logger.notice("replacing a stale pid file \(path) (\(stale.staleReason))") }
                lock = claim.lock
            }
        }
        guard lock.write(pid: Processes.current, url: nil) else {
            printError("mishap: cannot write the pid file \(path): \(Platform.describeLastError())")
            lock.remove()
            throw ExitCode.failure
        }
        return lock
    }
}
