import ArgumentParser
import MishapImport
import MishapSupport

/// `mishap-import`, the importer's own executable, which `mishap import` runs: kept out of
/// `mishap` so that the server's binary and startup carry no OpenAPI library.
@main
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mishap import",
        abstract: "Make scenario files from a description of your API.",
        subcommands: [OpenAPICommand.self]
    )
}

/// `mishap import openapi FILE --out DIR`.
struct OpenAPICommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openapi",
        abstract: "Make a scenario folder from an OpenAPI 3.0 or 3.1 description (YAML or JSON).",
        discussion: """
            Writes one scenario file per path into DIR: each operation an endpoint whose last rule \
            answers its success response (the description's example, or a body made from its schema). \
            Above it, rules that answer only when forced (X-Mishap-Rule: NAME, or mishap force): every \
            declared error response (named after the response, or status404 with its usual name, \
            notFound, as an alias), and the answers decoders choke on (missingRequiredField, \
            nullNotNullable, numberAsString, unknownEnumValue, extraField, emptyArray, longArray, \
            otherDateFormat, byteOrderMark, truncatedJSON). DIR/transport-failures/ adds reset, \
            dropped, garbage, truncated, truncatedChunked, lengthMismatch, timeout, slowpoke and \
            trickle to every endpoint through extends. References within the file are followed, \
            others are reported and skipped; Swagger 2.0 is refused. DIR must be new or empty; \
            --overwrite replaces the files an import generated (they start with a header line) and \
            keeps your own. Prints what was made and what was skipped; exits 1 on a problem.
            """
    )

    @Argument(help: "The OpenAPI description, YAML or JSON (at most 16 MiB).")
    var file: String

    @Option(name: .long, help: ArgumentHelp("The folder to write the scenario files into.", valueName: "dir"))
    var out: String

    @Flag(help: "Replace the files an earlier import generated in the folder; files of your own are kept.")
    var overwrite = false

    func run() throws {
        do {
            let summary = try OpenAPIImporter.importDescription(file: file, into: out, overwrite: overwrite)
            print(summary.description)
        } catch {
            _ = FileDescriptor.writeAll(2, "mishap import openapi: \(error.description)\n")
            throw ExitCode.failure
        }
    }
}
