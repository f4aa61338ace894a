/// `ranges:` on a response with a body: `Range` requests are answered with the part asked
/// for. Placeholder until ranges are written.
public struct RangeSupport: Sendable {
    public init() {}

    /// Turns a whole-body plan into the answer to the request's `Range` (if any).
    func apply(to plan: inout ResponsePlan, request: Request) {}
}
