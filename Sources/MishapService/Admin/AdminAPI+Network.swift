import MishapEngine
import MishapScenarios
import MishapSupport

// A session's network from outside (`/__mishap/network?session=ID`): `PUT` with a profile sets
// it (`?for=30s` ends it by itself), `GET` shows it, `DELETE` removes it. A session is
// required: the server's default is `--network`, set when it starts.
extension AdminAPI {
    func network(_ request: Request) -> ResponsePlan {
        guard let session = request.queryValue("session"), !session.isEmpty else {
            return Self.error(400, "'session' is required: the session whose network to set, show or remove, like /__mishap/network?session=s1 (the server's default is --network)")
        }
        if request.queryValue("for") != nil && request.method != "PUT" {
            return Self.error(400, "'for' goes with PUT /__mishap/network; \(request.method) takes 'session'")
        }
        switch request.method {
        case "PUT":
            var milliseconds: Int?
            if let text = request.queryValue("for") {
                guard case .success(let value) = DurationText.milliseconds(text, bare: .seconds), value > 0 else {
                    return Self.error(400, "'for' must be a duration over 0 and at most a day: seconds (30, 0.5) or with a unit (500ms, 30s, 2m, 1h)")
                }
                milliseconds = value
            }
            guard let text = String(validUTF8: request.body), !text.allSatisfy({ $0.isWhitespace }) else {
                return Self.error(400, #"PUT /__mishap/network takes a JSON body: {"preset": "edge"}, or a profile like {"latency": "300ms", "bandwidth": {"down": "20kB/s"}}"#)
            }
            switch NetworkProfileReader.read(text: text, name: "body", allowOffline: true) {
            case .failure(let error):
                return Self.json(422, .object([
                    ("error", .bool(true)),
                    ("reason", .string("the network profile has problems: " + (error.diagnostics.first?.description ?? "unreadable"))),
                    ("problems", .array(error.diagnostics.map { JSON.string($0.description) })),
                ]))
            case .success(let profile):
                service.setNetwork(profile, session: session, milliseconds: milliseconds)
            }
        case "DELETE":
            service.clearNetwork(session: session)
        default:
            break
        }
        return Self.json(200, networkJSON(session: session))
    }

    /// `{"session": ..., "network": PROFILE or null, "expiresInMs": ..., "offlineForMs": ...}`.
    private func networkJSON(session: String) -> JSON {
        guard let setting = service.network(session: session) else {
            return .object([("session", .string(session)), ("network", .null)])
        }
        return .object([
            ("session", .string(session)),
            ("network", Self.json(for: setting.profile)),
            ("expiresInMs", setting.remainingMilliseconds.map { .int(Int($0)) } ?? .null),
            ("offlineForMs", setting.offlineMilliseconds.map { .int(Int($0)) } ?? .null),
        ])
    }

    /// A profile as the admin API shows it, in the keys it is written with (rates in bytes per
    /// second, durations in milliseconds).
    static func json(for profile: NetworkProfile) -> JSON {
        func duration(_ milliseconds: Int) -> JSON { .string("\(milliseconds)ms") }
        var members: [(String, JSON)] = [("name", .string(profile.displayName))]
        switch profile.latency {
        case .fixed(let value)?: members.append(("latency", duration(value)))
        case .uniform(let range)?: members.append(("latency", .object([("min", duration(range.lowerBound)), ("max", duration(range.upperBound))])))
        case .normal(let mean, let deviation)?:
            members.append(("latency", .object([("mean", duration(mean)), ("deviation", duration(deviation))])))
        case .logNormal(let median, let spread)?:
            members.append(("latency", .object([("median", duration(median)), ("spread", .double(spread))])))
        case nil: members.append(("latency", .null))
        }
        members.append(("jitter", duration(profile.jitterMilliseconds)))
        members.append(("latencyPerChunk", .bool(profile.latencyPerChunk)))
        members.append(("bandwidth", .object([("down", .optional(profile.downBytesPerSecond)), ("up", .optional(profile.upBytesPerSecond))])))
        members.append(("loss", .double(profile.loss)))
        switch profile.resetAfter {
        case .bytes(let count)?: members.append(("resetAfterBytes", .int(count)))
        case .fraction(let fraction)?: members.append(("resetAfterBytes", .string("\(Int((fraction * 100).rounded()))%")))
        case nil: members.append(("resetAfterBytes", .null))
        }
        members.append(("slowClose", duration(profile.slowCloseMilliseconds)))
        switch profile.upload {
        case .stallAfterBytes(let count)?: members.append(("upload", .object([("stallAfterBytes", .int(count))])))
        case .resetAfterBytes(let count)?: members.append(("upload", .object([("resetAfterBytes", .int(count))])))
        case .answerEarly(let status)?: members.append(("upload", .object([("answerEarly", .int(status))])))
        case nil: members.append(("upload", .null))
        }
        members.append(("offline", profile.offlineMilliseconds.map(duration) ?? .null))
        return .object(members)
    }
}
