extension ResponsePlan {
    /// What the journal, the Retry-After check and the request log are told of an answer, kept
    /// together so that it travels as one when a plan is replaced by another for the same
    /// request (a 500 for headers that do not fit, a 429 of a quota, an upstream's answer).
    public struct Bookkeeping: Sendable {
        /// The endpoint that matched, as written in its scenario (`GET /login`), if any.
        public var endpoint: String?
        /// The name of the rule that answered, if any.
        public var rule: String?
        /// The runtime entry (`r3`) whose rule answered, when one did.
        public var runtimeRule: String?
        /// The state changes the answering rule made, for the journal.
        public var stateChanges: [StateChange]
        /// A remark for the request's log line: why no rule answered, in brief.
        public var note: String?
        /// Something wrong with the response the rule asked for, which the server logs as a
        /// warning when it carries the plan out (headers over `ResponseHead.maximumHeaderBytes`,
        /// answered 500).
        public var warning: String?
        /// The upstream server that answered (its base URL), for the request's log line: set
        /// on the plan made of its answer.
        public var upstream: String?
        /// A number the responder gives the plan to be told, with it, when the server is done
        /// with the request (`RequestObserver.finished`; 0: not told). The service gives its
        /// journal entry's id, to note how long the request took.
        public var completionTag: UInt64
        /// What `ranges:` made of the request (the `Range` asked, the part sent), for the
        /// journal; nil for a response without `ranges:`.
        public var range: RangeOutcome? = nil

        public init(endpoint: String? = nil, rule: String? = nil, runtimeRule: String? = nil,
                    stateChanges: [StateChange] = [], note: String? = nil, warning: String? = nil,
                    upstream: String? = nil, completionTag: UInt64 = 0) {
            self.endpoint = endpoint
            self.rule = rule
            self.runtimeRule = runtimeRule
            self.stateChanges = stateChanges
            self.note = note
            self.warning = warning
            self.upstream = upstream
            self.completionTag = completionTag
        }
    }
}
