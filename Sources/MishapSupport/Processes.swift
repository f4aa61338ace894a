#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process id (`pid_t`), for the modules that do not import the C library.
public typealias ProcessID = pid_t

/// Signals by name, for `SignalSet` and `Processes.send`.
public enum SignalNumber {
    /// SIGINT: Control-C.
    public static let interrupt = SIGINT
    /// SIGTERM: asked to stop.
    public static let terminate = SIGTERM
    /// SIGHUP: for Mishap, reload.
    public static let hangUp = SIGHUP
}

/// Other processes and this one: ids, signals, children that exited, pauses.
public enum Processes {
    /// This process's id.
    public static var current: ProcessID { getpid() }

    /// Whether a process with this id exists (one of another user's too), as `kill(pid, 0)`
    /// tells.
    public static func exists(_ pid: ProcessID) -> Bool {
        pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)
    }

    /// Sends `signal` to the process; whether it was sent.
    @discardableResult
    public static func send(_ signal: Int32, to pid: ProcessID) -> Bool {
        kill(pid, signal) == 0
    }

    /// The wait status of the child `pid` when it has exited (reaped then), nil while it runs
    /// (or on an error); does not wait.
    public static func waitStatusIfExited(_ pid: ProcessID) -> Int32? {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == pid ? status : nil
    }

    /// Sleeps this thread for `milliseconds`.
    public static func pause(milliseconds: Int) {
        usleep(useconds_t(milliseconds * 1000))
    }

    /// Writes out what the C library's standard streams hold (`fflush(NULL)`).
    public static func flushStandardStreams() {
        fflush(nil)
    }
}
