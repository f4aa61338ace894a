import MishapEngine
import MishapSupport

// A session's time from outside: its clock (`/__mishap/clock`) and its settings
// (`/__mishap/sessions/ID`: the Retry-After scale, and the clock offset shown).
extension AdminAPI {
    /// `GET ?session=ID`: the session's clock offset. `POST ?session=ID&advance=60s` moves it
    /// forward; `POST ?session=ID&reset=true` forgets it.
    func clock(_ request: Request) -> ResponsePlan {
        guard let session = request.queryValue("session"), !session.isEmpty else {
            return Self.error(400, "'session' is required: the session whose clock to show or move, like /__mishap/clock?session=s1&advance=60s")
        }
        let advance = request.queryValue("advance"), reset = request.queryValue("reset")
        if request.method == "POST" {
            switch (advance, reset) {
            case (let text?, nil):
                guard case .success(let milliseconds) = DurationText.milliseconds(text, bare: .seconds), milliseconds > 0 else {
                    return Self.error(400, "'advance' must be a duration over 0 and at most a day: seconds (60, 0.5) or with a unit (500ms, 30s, 2m, 1h)")
                }
                service.advanceClock(session: session, milliseconds: Int64(milliseconds))
            case (nil, "true"?):
                service.resetClock(session: session)
            case (nil, _?):
                return Self.error(400, "'reset' takes true: POST /__mishap/clock?session=ID&reset=true")
            case (_?, _?):
                return Self.error(400, "give 'advance' or 'reset', not both")
            case (nil, nil):
                return Self.error(400, "POST /__mishap/clock takes 'advance' (advance=60s moves the session's clock forward) or reset=true")
            }
        } else if advance != nil || reset != nil {
            return Self.error(400, "'advance' and 'reset' go with POST /__mishap/clock; GET takes 'session'")
        }
        return Self.json(200, .object([
            ("session", .string(session)),
            ("offsetMs", .int(Int(service.clockOffset(session: session)))),
        ]))
    }

    /// `/__mishap/sessions/ID`: `GET` shows the session's settings, `POST ?retryAfterScale=0.01`
    /// sets its scale, `DELETE` ends its settings (scale and clock offset).
    func sessionSettings(_ session: String, _ request: Request) -> ResponsePlan {
        let methods = ["GET", "POST", "DELETE"]
        let method = request.method == "HEAD" ? "GET" : request.method
        guard methods.contains(method) else {
            var plan = Self.error(405, "\(request.path) takes GET, POST or DELETE")
            plan.headers.append(Field("Allow", "GET, HEAD, POST, DELETE"))
            return plan
        }
        guard !session.isEmpty else {
            return Self.error(404, "/__mishap/sessions/ takes a session id: /__mishap/sessions/ID")
        }
        let known = method == "POST" ? ["retryAfterScale"] : []
        if let problem = Self.parameterProblem(request.query, path: request.path, known: known) { return Self.error(400, problem) }
        switch method {
        case "POST":
            guard let text = request.queryValue("retryAfterScale") else {
                return Self.error(400, "POST \(request.path) takes retryAfterScale, a number over 0 and at most 1 (0.01 makes Retry-After: 17 into 1)")
            }
            guard let scale = Double(text), scale.isFinite, scale > 0, scale <= 1 else {
                return Self.error(400, "'retryAfterScale' must be a number over 0 and at most 1 (0.01 makes Retry-After: 17 into 1)")
            }
            service.setRetryAfterScale(scale, session: session)
        case "DELETE":
            service.endSessionSettings(session: session)
        default:
            break
        }
        return Self.json(200, .object([
            ("session", .string(session)),
            ("retryAfterScale", service.retryAfterScale(session: session).map(JSON.double) ?? .null),
            ("clockOffsetMs", .int(Int(service.clockOffset(session: session)))),
        ]))
    }
}
