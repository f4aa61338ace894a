import ArgumentParser
import MishapEngine
import MishapScenarios
import MishapSupport

/// `mishap routes`: the endpoints of a scenarios folder and their rules, in match order; with
/// `--url`, those of a running server, rules added at runtime included.
struct Routes: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "routes",
        abstract: "List the endpoints of a scenarios folder and the rules of each, in match order.",
        discussion: """
            Each rule is shown with its aliases, when it answers (its `when` and `chance` in brief) \
            and what it answers. With --url, lists what a running server answers with instead \
            (GET /__mishap/routes), the rules added at runtime included.
            """
    )

    @OptionGroup var folder: ScenariosFolderArguments

    @OptionGroup var admin: AdminServerOptions<Routes>

    func run() throws {
        if let url = admin.url {
            switch adminCall(url: url, token: admin.token, target: "/__mishap/routes") {
            case .success((200, let listing)):
                print(listing, terminator: listing.hasSuffix("\n") ? "" : "\n")
                return
            case .success((let status, let answer)):
                printError("mishap: \(url) answered \(status): \(answer)")
            case .failure(let failure):
                printError("mishap: \(failure)")
            }
            throw ExitCode.failure
        }
        let directory = folder.folder
        let scenarios: ScenarioSet
        do {
            scenarios = try ScenarioLoader.load(directory: directory)
        } catch {
            printError(error.description)
            throw ExitCode.failure
        }
        for line in RouteListing.lines(scenarios.endpoints) { print(line) }
    }
}

extension Routes: AdminServerHelp {
    static let urlHelp = "List the routes of the server at this URL instead of a folder's."
    static let adminTokenHelp = "The server's admin token, for --url (read from MISHAP_ADMIN_TOKEN when not given)."
}
