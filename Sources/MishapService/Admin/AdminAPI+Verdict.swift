import MishapEngine

extension AdminAPI {
    /// `GET /__mishap/verdict`: how a session's client handled the failures it met.
    func verdict(_ request: Request) -> ResponsePlan {
        let session = request.queryValue("session")
        if session?.isEmpty == true { return Self.error(400, "'session' must not be empty (leave it out for the requests without a session)") }
        var options = VerdictOptions(endpoint: request.queryValue("endpoint"))
        if let text = request.queryValue("maxAttempts") {
            guard let value = Int(text), (1...1_000_000).contains(value) else {
                return Self.error(400, "'maxAttempts' must be a whole number from 1 to 1000000 (the most attempts a failing request may get)")
            }
            options.maxAttempts = value
        }
        if let text = request.queryValue("giveUpWithin") {
            guard case .success(let milliseconds) = DurationText.milliseconds(text, bare: .seconds), milliseconds > 0 else {
                return Self.error(400, "'giveUpWithin' must be a duration over 0 and at most a day: seconds (30, 0.5) or with a unit (500ms, 30s, 2m, 1h)")
            }
            options.giveUpWithinMilliseconds = Int64(milliseconds)
        }
        let verdict = service.verdict(session: session, options: options)
        return Self.json(200, verdict.jsonValue)
    }
}
