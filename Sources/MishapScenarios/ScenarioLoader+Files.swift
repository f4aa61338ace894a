import MishapSupport

// The file system side of loading: which files are scenarios, and reading them safely.
extension ScenarioLoader {
    /// Why a scenario file cannot be read.
    struct ReadProblem: Error {
        let message: String
    }

    /// The bytes of a scenario file. It is opened without blocking, so a FIFO named like a
    /// scenario cannot stall a load, and read only when it is a regular file within
    /// `YAMLLimits.maximumFileSize`.
    static func readScenarioFile(_ path: String) -> Result<[UInt8], ReadProblem> {
        readRegularFile(path, limit: YAMLLimits.maximumFileSize, what: "a scenario file")
    }

    /// The bytes of a regular file of at most `limit` bytes (`what` names it in messages),
    /// opened without blocking.
    static func readRegularFile(_ path: String, limit: Int, what: String) -> Result<[UInt8], ReadProblem> {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            return .failure(ReadProblem(message: "cannot be read: \(Platform.describe(errno: errno))"))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            return .failure(ReadProblem(message: "cannot be read: \(Platform.describe(errno: errno))"))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return .failure(ReadProblem(message: "cannot be read: not a regular file"))
        }
        func tooLarge(_ size: Int) -> ReadProblem {
            ReadProblem(message: "is \(size) bytes; \(what) may be at most \(limit / (1024 * 1024)) MiB (\(limit) bytes)")
        }
        guard Int(info.st_size) <= limit else { return .failure(tooLarge(Int(info.st_size))) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        // Left uninitialized: an array of 64 KiB of zeros was most of reading a small file.
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count = read(descriptor, chunk.baseAddress, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(ReadProblem(message: "cannot be read: \(Platform.describe(errno: errno))"))
            }
            if count == 0 { break }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<count]))
            // The file grew while being read.
            guard bytes.count <= limit else { return .failure(tooLarge(bytes.count)) }
        }
        return .success(bytes)
    }

    /// Scenario files below `root`, relative to it, sorted. Symbolic links are followed only
    /// while they stay inside `root`, and each folder is read once, so a link loop ends.
    static func scenarioFiles(in root: String) -> (files: [String], problems: [(String, String)]) {
        var found: [String] = []
        var problems: [(String, String)] = []
        var visited: Set<String> = [root]
        func walk(_ relative: String) {
            let path = relative.isEmpty ? root : root + "/" + relative
            for (name, isFolder) in FileSystem.entries(of: path) {
                if name.hasPrefix(".") { continue }
                let child = relative.isEmpty ? name : relative + "/" + name
                let full = root + "/" + child
                var isScenario: Bool {
                    guard name.contains("."), let ext = name.split(separator: ".").last else { return false }
                    return extensions.contains(ext.lowercased())
                }
                if isFolder {
                    guard name != bodyFolderName else { continue }
                    guard let real = FileSystem.realPath(full), real == root || real.hasPrefix(root + "/") else {
                        problems.append((child, "links to a folder outside the scenarios folder; not read"))
                        continue
                    }
                    if visited.insert(real).inserted { walk(child) }
                } else if isScenario {
                    guard let real = FileSystem.realPath(full), real.hasPrefix(root + "/") else {
                        problems.append((child, "links to a file outside the scenarios folder; not read"))
                        continue
                    }
                    found.append(child)
                }
            }
        }
        walk("")
        return (found.sorted(), problems)
    }
}
