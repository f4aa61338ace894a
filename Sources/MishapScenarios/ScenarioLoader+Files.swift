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
    /// opened without blocking (`FileSystem.readRegularFile`).
    static func readRegularFile(_ path: String, limit: Int, what: String) -> Result<[UInt8], ReadProblem> {
        FileSystem.readRegularFile(path, limit: limit).mapError { problem in
            switch problem {
            case .unreadable(let reason): ReadProblem(message: "cannot be read: \(reason)")
            case .notRegular: ReadProblem(message: "cannot be read: not a regular file")
            case .tooLarge(let size):
                ReadProblem(message: "is \(size) bytes; \(what) may be at most \(limit / (1024 * 1024)) MiB (\(limit) bytes)")
            }
        }
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
