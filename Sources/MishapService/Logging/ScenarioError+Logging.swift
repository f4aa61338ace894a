import Logging
import MishapScenarios

extension ScenarioError {
    /// The problems as log metadata (`LineLogHandler.problemsKey`): each with its `file`, `line`,
    /// `column` and `message`, so a JSON log line carries them as objects, not prose.
    public var logMetadata: Logger.Metadata {
        [LineLogHandler.problemsKey: .array(diagnostics.map { problem in
            .dictionary([
                "file": .string(problem.file), "line": .stringConvertible(problem.line),
                "column": .stringConvertible(problem.column), "message": .string(problem.message),
            ])
        })]
    }
}
