#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starting this program again as a background server.
public enum Spawn {
    /// The running executable.
    public static var executablePath: String {
        #if os(Linux)
        return "/proc/self/exe"
        #else
        return FileSystem.absolutePath(CommandLine.arguments[0])
        #endif
    }

    /// `POSIX_SPAWN_SETSID`: a glibc extension that Swift does not see without `_GNU_SOURCE`,
    /// and a different value on Apple's systems.
    private static var newSessionFlag: Int16 {
        #if os(Linux)
        return 0x80
        #else
        return 0x400
        #endif
    }

    /// Starts this program with `arguments` (the first is its name) in a session of its own,
    /// so the terminal's signals do not reach it: standard input from /dev/null, standard
    /// output and error to `output`, and `passing` as descriptors 3, 4, ... Every other
    /// descriptor this process holds is marked close-on-exec first, so the new program gets
    /// none of its caller's pipes or sockets. Returns its pid, or the `errno` of the failure.
    public static func detached(arguments: [String], output: Int32, passing: [Int32]) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, output, 2)
        // Copied above every target number first, so that a descriptor that is itself 3, 4, ...
        // is not overwritten by an earlier copy before its own turn.
        let lifted = passing.map { fcntl($0, F_DUPFD_CLOEXEC, Int32(3 + passing.count)) }
        defer { lifted.filter { $0 >= 0 }.forEach { close($0) } }
        for (index, descriptor) in lifted.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, descriptor >= 0 ? descriptor : passing[index], Int32(3 + index))
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, newSessionFlag)

        FileDescriptor.markInheritedCloseOnExec()
        var child: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawn(&child, executablePath, &actions, &attributes, argv, environ)
        return spawned == 0 ? .success(child) : .failure(SpawnError(code: spawned))
    }

    /// Why a program did not start.
    public struct SpawnError: Error, CustomStringConvertible {
        public let code: Int32
        public var description: String { Platform.describe(errno: code) }
    }
}

/// The limit on open descriptors, which bounds how many connections fit.
public enum OpenFileLimit {
    /// Raises the soft limit toward the hard one so `wanted` descriptors, plus `reserve` for
    /// everything else, fit. Returns how many of `wanted` fit, and the soft limit now in force
    /// (nil when it cannot be read).
    public static func raise(toFit wanted: Int, reserve: Int) -> (fitting: Int, limit: UInt64?) {
        var limit = rlimit()
        #if os(Linux)
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return (wanted, nil) }
        let needed = rlim_t(wanted + reserve)
        if limit.rlim_cur < needed {
            var raised = limit
            raised.rlim_cur = limit.rlim_max == rlim_t.max ? needed : min(needed, limit.rlim_max)
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        let fitting = limit.rlim_cur == rlim_t.max ? wanted : min(wanted, max(1, Int(clamping: limit.rlim_cur) - reserve))
        return (fitting, UInt64(limit.rlim_cur))
    }
}
