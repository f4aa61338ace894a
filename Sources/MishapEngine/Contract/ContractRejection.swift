import MishapSupport

/// The answer to a request that does not fit its operation: 400, with Mishap's error body
/// (`{"error":true,"reason":"..."}`) and every problem listed in `problems`.
public enum ContractRejection {
    /// `{"error":true,"reason":"POST /pets: the request does not match the API description (2 problems)","problems":[...]}`.
    public static func plan(_ problems: ContractProblems, operation: String) -> ResponsePlan {
        var body = Array(#"{"error":true,"reason":""#.utf8)
        JSONEscaping.appendEscaped(reason(problems, operation: operation), to: &body)
        body += Array(#"","problems":["#.utf8)
        for (index, problem) in problems.list.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(UInt8(ascii: "\""))
            JSONEscaping.appendEscaped(problem, to: &body)
            body.append(UInt8(ascii: "\""))
        }
        body += Array("]}".utf8)
        return ResponsePlan(status: 400, headers: [Field("Content-Type", "application/json; charset=utf-8")], body: body)
    }

    /// `POST /pets: the request does not match the API description (2 problems)`.
    public static func reason(_ problems: ContractProblems, operation: String) -> String {
        let count = problems.list.count + problems.leftOut
        let more = problems.leftOut > 0 ? "; the first \(problems.list.count) are listed" : ""
        return "\(operation): the request does not match the API description (\(count) problem\(count == 1 ? "" : "s")\(more))"
    }
}
