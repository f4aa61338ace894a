import MishapScenarios

/// An operation of the description as an endpoint of Mishap's: its declaration
/// (`GET /pets/{petId}`), a line saying which operation it is, its rules in the order they are
/// tried (declared errors and decoder variants, each forced only, then the success answer
/// that answers every request), and the transport failures added to it through `extends`.
struct ImportedEndpoint {
    var declaration: String
    var about: String
    var rules: [ImportedRule]
    var transportFailures: [ImportedRule]
    /// Counts for the summary.
    var exampleAnswer: Bool
    var errorRules: Int
    var variantRules: Int
}

/// Rule names given within one endpoint, compared in any case as Mishap compares them: a name
/// already taken gets a number (`notFound2`), an alias already taken is left out.
struct RuleNames {
    private var taken: Set<String> = []

    /// `wanted` as an identifier, numbered when the endpoint has it already; taken from now on.
    mutating func name(_ wanted: String) -> String {
        var name = Self.identifier(wanted)
        var number = 2
        while taken.contains(name.lowercased()) {
            name = Self.identifier(wanted) + String(number)
            number += 1
        }
        taken.insert(name.lowercased())
        return name
    }

    /// The aliases of `wanted` that are still free, taken from now on.
    mutating func aliases(_ wanted: [String]) -> [String] {
        var kept: [String] = []
        for alias in wanted where !taken.contains(alias.lowercased()) {
            taken.insert(alias.lowercased())
            kept.append(alias)
        }
        return kept
    }

    /// `NotFound` as `notFound`, `Bad-Request` as `badRequest`: letters and digits, in lower
    /// camel case, never empty.
    static func identifier(_ text: String) -> String {
        var out = ""
        var upperNext = false
        for character in text {
            if character.isASCII && (character.isLetter || character.isNumber) {
                out.append(upperNext && !out.isEmpty ? Character(character.uppercased()) : character)
                upperNext = false
            } else {
                upperNext = true
            }
        }
        guard let first = out.first else { return "response" }
        return first.lowercased() + out.dropFirst()
    }

    /// The usual names of error statuses, given as aliases (`X-Mishap-Rule: notFound`).
    static let statusNames: [Int: String] = [
        400: "badRequest", 401: "unauthorized", 403: "forbidden", 404: "notFound", 405: "methodNotAllowed",
        406: "notAcceptable", 408: "requestTimeout", 409: "conflict", 410: "gone", 412: "preconditionFailed",
        413: "payloadTooLarge", 415: "unsupportedMediaType", 422: "unprocessableEntity", 429: "tooManyRequests",
        500: "internalServerError", 501: "notImplemented", 502: "badGateway", 503: "serviceUnavailable", 504: "gatewayTimeout",
    ]
}
