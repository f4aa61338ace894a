import MishapEngine
import MishapScenarios

extension MishapService {
    /// The 400 for a request its operation in the API description does not accept, noted in
    /// the journal and the unmatched requests with every problem; nil when the request fits or
    /// no operation describes it (the rules answer it then). Asked only with a description.
    func refusal(of request: Request) -> ResponsePlan? {
        guard let description = contract.withLock({ $0 }),
              let (operation, problems) = description.contract.problems(for: request), !problems.list.isEmpty else { return nil }
        var plan = ContractRejection.plan(problems, operation: operation)
        let listed = problems.list + (problems.leftOut > 0 ? ["(\(problems.leftOut) more problem(s) not listed)"] : [])
        note(request, &plan, unmatched: true, contractProblems: listed)
        return plan
    }

    /// Logs each keyword of the API description in force that is not checked, one warning each,
    /// and how many operations are checked.
    func logContractWarnings() {
        guard checksRequests, let description = contract.withLock({ $0 }) else { return }
        logger.info("checking requests against \(description.contract.source): \(description.contract.operationCount) operation(s)")
        for warning in description.warnings {
            logger.warning("\(warning.description)")
        }
    }
}
