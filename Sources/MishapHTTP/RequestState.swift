import MishapEngine
import MishapSupport
import Synchronization

/// What a request collects between the calls libmicrohttpd makes for it. Kept in the request's
/// context pointer: retained there by the first call that needs it (`handleAccess`), released
/// by `handleCompleted`.
final class RequestState {
    /// The body received so far. Like `record` below, touched only by the worker thread serving
    /// the request, so the runtime's exclusivity checks (three a request with a body) are left out.
    @exclusivity(unchecked) var body: [UInt8] = []
    /// Set when the body outgrows the limit: the rest is dropped and the request answered 413.
    var bodyTooLarge = false
    /// A plan waiting out its delay, or held by `hang`, while the connection is suspended.
    var waitingPlan: ResponsePlan?
    /// What the observer is told at the end (filled in only when the server has an observer,
    /// which never changes while it serves): filled in place as the request goes, and moved
    /// out whole when it ends, so that it is neither copied nor destroyed twice. Only the
    /// worker thread serving the request touches it (libmicrohttpd calls a request's callbacks
    /// on one thread, one at a time), so the runtime's exclusivity checks are left out.
    @exclusivity(unchecked) var record = CompletedRequest()
    /// `MonotonicClock.nanoseconds()` when the request's headers arrived.
    var started: Int64 = 0
    /// The plan's `completionTag`, for the observer's `finished` when the server is done.
    var completionTag: UInt64 = 0
    /// Set while the request waits for its upstream's answer, which lands here.
    var forwarded: ForwardedAnswer?
    /// The memory budget's share the upstream's answer holds: kept until the request ends, its
    /// last byte sent.
    var heldMemory: MemoryLease?
    /// The room the response head has, kept for the answer that comes later.
    var responseHeaderRoom = ResponseHead.maximumHeaderBytes
    /// A request that declares a body: its method, path, query, headers and whether it is
    /// from loopback, read on the first call (libmicrohttpd's pointers are valid only during a
    /// call), and taken by the last call, which asks the responder. Still here when the request
    /// ends, the body never came whole: the request is told to the observer as incomplete
    /// (`RequestObserver.incomplete`), with what body arrived.
    var head: Request?
    /// What a network profile does to the body on its way in (a rate, a stall, a reset); nil
    /// for most requests: the body is read as it comes.
    var upload: UploadGate?
}

extension CompletedRequest {
    /// An empty record, filled in as the request goes (`RequestState.record`).
    /// (Every field has its default in the declaration: built through the public initializer,
    /// the empty record cost a copy and two destructions of the whole struct.)
    init() {}

    /// Notes a plan decided before the request value was built (413, 431).
    mutating func note(method: UnsafePointer<CChar>, url: UnsafePointer<CChar>, plan: ResponsePlan) {
        self.method = RequestTarget.method(method)
        self.path = RequestTarget.path(url)
        note(plan: plan)
    }

    /// Notes the request's method and path and how the plan answers.
    mutating func note(method: String, path: String, plan: ResponsePlan) {
        self.method = method
        self.path = path
        note(plan: plan)
    }

    /// Notes how the plan answers: its status (none for a fault or a hang), rule, endpoint,
    /// fault, remark for the log, and the upstream that answered.
    mutating func note(plan: ResponsePlan) {
        status = plan.fault == nil && !plan.hang ? plan.status : nil
        rule = plan.bookkeeping.rule
        endpoint = plan.bookkeeping.endpoint
        fault = plan.fault
        note = plan.bookkeeping.note
        upstream = plan.bookkeeping.upstream
    }
}

/// Where an upstream's answer waits for the connection to resume: written by the thread the
/// answer comes on, read by the worker thread that resumes the request (or never, when the
/// server stopped first).
final class ForwardedAnswer: Sendable {
    private let plan = Mutex<(ResponsePlan, MemoryLease?)?>(nil)

    func set(_ answer: ResponsePlan, heldMemory: MemoryLease?) {
        plan.withLock { $0 = (answer, heldMemory) }
    }

    /// The answer and the memory its body holds, once it came.
    func take() -> (ResponsePlan, MemoryLease?)? {
        plan.withLock { plan in
            defer { plan = nil }
            return plan
        }
    }
}
