import ArgumentParser
import MishapSupport

/// `mishap import ...`: carried out by the `mishap-import` executable installed beside `mishap`
/// (OpenAPIKit is large, and `mishap serve` must start without it), which this command
/// replaces itself with, arguments and exit status passed through. `MishapCommand.main` hands
/// `import` over before parsing, so that `mishap import openapi --help` prints the importer's
/// own help; this type puts the command in `mishap --help`.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Make scenario files from an OpenAPI description: mishap import openapi FILE --out DIR.",
        discussion: "Run by the mishap-import executable installed beside mishap. See mishap import openapi --help."
    )

    @Argument(parsing: .allUnrecognized, help: "What mishap-import takes: openapi FILE --out DIR [--overwrite].")
    var arguments: [String] = []

    func run() throws {
        Self.handOver(arguments)
    }

    /// The executable's name, beside `mishap`.
    static let executableName = "mishap-import"

    /// When the command line is `mishap import ...`, runs `mishap-import` with the rest in place
    /// of this process; when it cannot be found or run, says so and exits 1.
    static func handOverIfAsked(_ commandLine: [String]) {
        guard commandLine.count > 1, commandLine[1] == "import" else { return }
        handOver(Array(commandLine.dropFirst(2)))
    }

    private static func handOver(_ arguments: [String]) -> Never {
        guard let folder = ProgramReplacement.executableFolder else {
            printError("mishap import: cannot find the folder of the running mishap (\(Spawn.executablePath))")
            Self.exit(withError: ExitCode.failure)
        }
        let path = folder + "/" + executableName
        guard FileSystem.status(path) != nil else {
            printError("mishap import: \(path) is missing: the importer is its own executable, installed beside mishap "
                + "(make install puts both in PREFIX/bin; from a clone, swift build builds both in .build/debug)")
            Self.exit(withError: ExitCode.failure)
        }
        let problem = ProgramReplacement.replace(with: path, arguments: [path] + arguments)
        printError("mishap import: cannot run \(path): \(problem)")
        Self.exit(withError: ExitCode.failure)
    }
}
