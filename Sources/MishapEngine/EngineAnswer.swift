/// What the engine made of a request: a plan from the rule (or runtime entry) that answered it,
/// or nothing, when no endpoint has its method and path or every rule passed. Who asks decides
/// what a request no rule answers gets: the engine's 404 (`Engine.notFound`), or the upstream's
/// answer (`--upstream`).
public enum EngineAnswer: Sendable {
    /// A rule answered with this plan (a forced rule the endpoint lacks is answered too: 400).
    case answered(ResponsePlan)
    /// No rule answered.
    case unmatched
}
