#if canImport(Glibc)
import Glibc
#endif

/// Runs a command to its end without Foundation's `Process`: `posix_spawnp`, then `waitpid`.
/// Its standard input is /dev/null, its output and errors go to the files named, and it
/// inherits no descriptor beyond those three.
///
/// Foundation's `Process.run` crashes (a bad pointer in its `memcpy`) in a process holding
/// thousands of descriptors, as the in-process tests' process does (the Makefile's
/// PROCESS_TESTS run apart for it): the tests there that run a command use this instead.
/// Returns the exit status, or 128 + the signal that ended the command.
public func spawnAndWait(_ arguments: [String], standardOutput: String, standardError: String) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    // Other tests' sockets, held by the child, would stay open after those tests close them.
    // glibc 2.34's closefrom action, looked up at run time (Swift's Glibc module does not declare it).
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
        _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
    }
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, &argv, environ)
    guard spawned == 0 else { throw SpawnError(command: arguments[0], code: spawned) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw SpawnError(command: arguments[0], code: errno) }
    }
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
}

/// A command that could not be started or waited for.
public struct SpawnError: Error, CustomStringConvertible {
    public let command: String
    public let code: Int32
    public var description: String { "\(command): \(String(cString: strerror(code)))" }
}
