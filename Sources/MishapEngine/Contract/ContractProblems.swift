/// The problems found in one request against its operation, each `PLACE: WHAT`
/// (`/email: expected a string in format email, got 42`, `query limit: required`), at most
/// `limit` of them, so that a huge body full of mistakes makes a bounded answer.
public struct ContractProblems: Sendable {
    /// The place of the request body itself (its members are `/name`, `/items/0`).
    public static let bodyPlace = "body"
    /// Problems listed at most for one request.
    public static let defaultLimit = 100

    public private(set) var list: [String] = []
    /// How many problems were found past the limit (not listed).
    public private(set) var leftOut = 0
    let limit: Int

    public init(limit: Int = ContractProblems.defaultLimit) {
        self.limit = limit
    }

    /// Whether no more problems are listed: checking can stop.
    var isFull: Bool { list.count >= limit }

    mutating func add(_ place: String, _ what: String) {
        guard list.count < limit else {
            leftOut += 1
            return
        }
        list.append("\(place): \(what)")
    }
}
