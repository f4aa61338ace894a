/// A response as declared in a scenario, ready to be filled in for one request. A class (its
/// parts never change once made): a rule's action hands it on with one reference count, where
/// a struct of a dozen parts was copied field by field for every request it answered.
public final class ResponseTemplate: Sendable {
    public let status: Int
    public let headers: [(name: String, value: Template)]
    public let body: Template
    public let delay: Delay?
    public let hang: Bool
    public let dribble: Dribble?
    public let fault: Fault?
    /// Where the request is sent for its answer (`proxy`), the rest of the template being added
    /// to the upstream's answer; nil for a response of the template's own.
    public let proxy: ProxyTarget?
    /// A stream held open instead of the body (`events:` or `websocket:`), if any.
    public let stream: StreamTemplate?
    /// How `Range` requests are answered (`ranges:`); nil: the whole body always.
    public let ranges: RangeSupport?
    /// Where the plans of this response send the request (`proxy`), worked out once.
    private let destination: ResponsePlan.Destination
    /// The headers, when none has a placeholder: rendered once, not per request.
    private let staticHeaders: [Field]?
    /// The whole response, when it is the same for every request (and its headers fit the limit).
    private let prepared: PreparedResponse?

    /// A response; with `shared`, equal parts without placeholders (header lists, bodies,
    /// whole prepared responses) are stored once for all the templates made with it.
    public init(
        status: Int, headers: [(name: String, value: Template)] = [], body: Template,
        delay: Delay? = nil, hang: Bool = false, dribble: Dribble? = nil, fault: Fault? = nil,
        proxy: ProxyTarget? = nil, stream: StreamTemplate? = nil, ranges: RangeSupport? = nil,
        sharing shared: SharedResponseParts? = nil
    ) {
        self.status = status
        self.proxy = proxy
        self.stream = stream
        // The ETag of a body the same for every request is worked out here, once.
        self.ranges = ranges?.resolved(staticBody: body.staticBytes)
        destination = proxy?.destination ?? .here
        self.delay = delay
        self.hang = hang
        self.dribble = dribble
        self.fault = fault
        var rendered: [Field]? = []
        for header in headers {
            guard let bytes = header.value.staticBytes else { rendered = nil; break }
            rendered?.append(Field(header.name, String(decoding: bytes, as: UTF8.self)))
        }
        if let shared, let fields = rendered {
            rendered = shared.fields(fields)
            self.headers = shared.headers(headers, renderedAs: fields)
        } else {
            self.headers = headers
        }
        let bytes = body.staticBytes
        if let shared, let bytes {
            self.body = shared.body(body, bytes: bytes)
        } else {
            self.body = body
        }
        staticHeaders = rendered
        if let rendered, ResponseHead.headerBytes(rendered) <= ResponseHead.maximumHeaderBytes,
           let bytes, delay == nil, !hang, dribble == nil, fault == nil, proxy == nil, stream == nil, ranges == nil {
            prepared = shared?.prepared(status: status, headers: rendered, body: bytes)
                ?? PreparedResponse(plan: ResponsePlan(status: status, headers: rendered, body: bytes))
        } else {
            prepared = nil
        }
    }

    /// Whether filling the response in reads state values.
    var readsState: Bool {
        body.readsState || headers.contains { $0.value.readsState }
    }

    /// How many random bytes the `garbage` fault sends when the response declares no body.
    static let garbageLength = 64

    /// The plan of this response for one request, naming the endpoint and rule that answered
    /// and the state they changed. These are set here, as the plan is made, rather than on the
    /// returned plan by the caller: each assignment there cost a copy of the whole plan.
    func plan(context: inout MatchContext, random: RandomSource, endpoint: String? = nil, rule: String? = nil,
              stateChanges: [StateChange] = []) -> ResponsePlan {
        let room = context.request.responseHeaderRoom
        if let prepared {
            // Built field by field from the prepared plan, not copied from it and then changed:
            // the copy was copied once more to be returned, and the first one destroyed.
            // Each part read through `prepared`: bound to a constant first, the whole plan was
            // copied (its bookkeeping and destination too) and destroyed. The bookkeeping is set
            // in place: made by its initializer, it was copied into the plan.
            var plan = ResponsePlan(
                status: prepared.plan.status, headers: prepared.plan.headers, body: prepared.plan.body,
                delayMilliseconds: prepared.plan.delayMilliseconds, hang: prepared.plan.hang,
                dribble: prepared.plan.dribble, fault: prepared.plan.fault,
                prepared: prepared, destination: .here, bookkeeping: ResponsePlan.Bookkeeping())
            plan.bookkeeping.endpoint = endpoint
            plan.bookkeeping.rule = rule
            plan.bookkeeping.stateChanges = stateChanges
            if room < ResponseHead.maximumHeaderBytes { plan.fitResponseHead(room: room) }
            return plan
        }
        var fields: [Field]
        if let staticHeaders {
            fields = staticHeaders
        } else {
            fields = []
            fields.reserveCapacity(headers.count)
            for header in headers {
                fields.append(Field(header.name, String(decoding: header.value.render(context: &context), as: UTF8.self)))
            }
        }
        var bytes = body.render(context: &context)
        if fault == .garbage && bytes.isEmpty {
            bytes = Self.garbage(random)
        }
        // Checked before the plan is made: the plan is then returned as made, not copied.
        let fits = ResponseHead.headerBytes(fields) <= min(room, ResponseHead.maximumHeaderBytes)
        let delayMilliseconds = delay?.milliseconds(random) ?? 0
        if stream != nil || ranges != nil {
            return streamOrRangePlan(status: status, fields: fields, bytes: bytes, delayMilliseconds: delayMilliseconds,
                                     context: &context, endpoint: endpoint, rule: rule, stateChanges: stateChanges,
                                     fits: fits, room: room)
        }
        if fits {
            return ResponsePlan(
                status: status, headers: fields, body: bytes,
                delayMilliseconds: delayMilliseconds, hang: hang, dribble: dribble, fault: fault,
                // `prepared:` picks the memberwise initializer, which takes the bookkeeping made
                // here as it is: the public one borrows it and copies it (about 200 instructions).
                prepared: nil, destination: destination,
                bookkeeping: ResponsePlan.Bookkeeping(endpoint: endpoint, rule: rule, stateChanges: stateChanges)
            )
        }
        var plan = ResponsePlan(
            status: status, headers: fields, body: bytes,
            delayMilliseconds: delayMilliseconds, hang: hang, dribble: dribble, fault: fault,
            prepared: nil, destination: destination,
            bookkeeping: ResponsePlan.Bookkeeping(endpoint: endpoint, rule: rule, stateChanges: stateChanges)
        )
        plan.fitResponseHead(room: room)
        return plan
    }

    /// The plan of a stream (`events:`, `websocket:`) or of a body answering `Range` requests,
    /// kept apart from `plan` so that the ordinary answer pays nothing for them.
    @inline(never)
    private func streamOrRangePlan(
        status: Int, fields: [Field], bytes: [UInt8], delayMilliseconds: Int, context: inout MatchContext,
        endpoint: String?, rule: String?, stateChanges: [StateChange], fits: Bool, room: Int
    ) -> ResponsePlan {
        var plan = ResponsePlan(
            status: status, headers: fields, body: bytes,
            delayMilliseconds: delayMilliseconds, hang: hang, dribble: dribble, fault: fault,
            prepared: nil, destination: destination,
            bookkeeping: ResponsePlan.Bookkeeping(endpoint: endpoint, rule: rule, stateChanges: stateChanges)
        )
        if let stream { plan.stream = stream.plan(context: &context) }
        if let ranges { ranges.apply(to: &plan, request: context.request) }
        // `ranges` adds headers of its own (Accept-Ranges, ETag, Content-Range): checked again.
        if !fits || ranges != nil { plan.fitResponseHead(room: room) }
        return plan
    }

    /// Random bytes that no HTTP parser accepts as a status line.
    static func garbage(_ random: RandomSource) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(garbageLength)
        while bytes.count < garbageLength {
            withUnsafeBytes(of: random.next()) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - garbageLength)
        // A leading 'H' could begin "HTTP/"; a control byte cannot.
        bytes[0] = 0x00
        return bytes
    }
}
