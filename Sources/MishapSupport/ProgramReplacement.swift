#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This process replaced by another program (`execv`), for a command carried out by an
/// executable of its own (`mishap import` runs `mishap-import`): the program keeps the process,
/// its standard streams and its exit status goes to whoever started `mishap`.
public enum ProgramReplacement {
    /// The folder of the running executable (links followed), or nil when it cannot be found.
    public static var executableFolder: String? {
        guard let path = FileSystem.realPath(Spawn.executablePath), let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Runs the program at `path` with `arguments` (the first is its name) in place of this
    /// one. Returns only when it could not: why.
    public static func replace(with path: String, arguments: [String]) -> String {
        Processes.flushStandardStreams()
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        execv(path, argv)
        return Platform.describe(errno: errno)
    }
}
