#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Another program run as a child and waited for (`mishap sweep`'s command): found on the
/// `PATH` with no shell, in a process group of its own so that it can be stopped with every
/// process it started.
public enum ChildCommand {
    /// How a child ended.
    public enum Ending: Equatable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// A wait status (`waitpid`) as an ending.
        public init(waitStatus: Int32) {
            let signal = waitStatus & 0x7F
            self = signal == 0 ? .exited((waitStatus >> 8) & 0xFF) : .signalled(signal)
        }
    }

    /// Starts `arguments` (the first is the program, looked up on the `PATH` when it has no
    /// slash) in a new process group, with the environment of this process and `setting`
    /// added (replacing variables of the same name): standard input from /dev/null, standard
    /// output to `standardOutput` (1, or 2 to keep this process's own output clean), standard
    /// error this process's. Signals this process blocks or ignores are unblocked and set to
    /// their defaults for it; it gets no other descriptor. Its pid (also its group's id), or
    /// why it did not start.
    public static func start(_ arguments: [String], setting: [(name: String, value: String)],
                             standardOutput: Int32) -> Result<ProcessID, Spawn.SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if standardOutput != 1 { posix_spawn_file_actions_adddup2(&actions, standardOutput, 1) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let names = Set(setting.map(\.name))
        var variables: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            let name = text.prefix { $0 != "=" }
            if !names.contains(String(name)) { variables.append(text) }
            entry += 1
        }
        variables += setting.map { $0.name + "=" + $0.value }

        FileDescriptor.markInheritedCloseOnExec()
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = variables.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }
        var child: pid_t = 0
        let spawned = posix_spawnp(&child, arguments[0], &actions, &attributes, argv, envp)
        return spawned == 0 ? .success(child) : .failure(Spawn.SpawnError(code: spawned))
    }

    /// Sends `signal` to every process of the group `group` (a pid `start` returned).
    public static func signalGroup(_ group: ProcessID, _ signal: Int32) {
        _ = kill(-group, signal)
    }

    /// Waits for the child `pid` to end, however long it takes.
    public static func waitForEnding(_ pid: ProcessID) -> Ending? {
        var status: Int32 = 0
        while true {
            if waitpid(pid, &status, 0) == pid { return Ending(waitStatus: status) }
            if errno != EINTR { return nil }
        }
    }

    /// A signal's name: `SIGTERM`, or `signal 42`.
    public static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGHUP: return "SIGHUP"
        case SIGINT: return "SIGINT"
        case SIGQUIT: return "SIGQUIT"
        case SIGILL: return "SIGILL"
        case SIGABRT: return "SIGABRT"
        case SIGFPE: return "SIGFPE"
        case SIGKILL: return "SIGKILL"
        case SIGSEGV: return "SIGSEGV"
        case SIGPIPE: return "SIGPIPE"
        case SIGTERM: return "SIGTERM"
        case SIGBUS: return "SIGBUS"
        case SIGTRAP: return "SIGTRAP"
        default: return "signal \(signal)"
        }
    }
}
