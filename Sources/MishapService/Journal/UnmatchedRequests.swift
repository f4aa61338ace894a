import MishapEngine
import Synchronization

/// A request no rule answered (a 404), with why: the nearest endpoints and rules.
public struct UnmatchedRequest: Sendable {
    /// The journal's id of the request, when the journal keeps it.
    public let id: UInt64
    /// When it arrived, in milliseconds since 1970.
    public let time: Int64
    public let method: String
    public let path: String
    public let query: [Field]
    public let session: String?
    public let nearMisses: [NearMiss]
    /// For a request refused by the API description (`--openapi`): its problems, in place of
    /// near misses (no rule was asked); nil for a request no rule answered.
    public var contractProblems: [String]? = nil
}

/// The last requests no rule answered, in a ring: `GET /__mishap/unmatched`.
public final class UnmatchedRequests: Sendable {
    public static let capacity = 100
    private let items = Mutex(RecentItems<UnmatchedRequest>(capacity: UnmatchedRequests.capacity))

    func record(_ request: UnmatchedRequest) {
        items.withLock { $0.append(request) }
    }

    /// The requests kept, oldest first: all, or one session's; the last `limit` when given.
    public func list(session: String? = nil, limit: Int? = nil) -> [UnmatchedRequest] {
        var kept = items.withLock { $0.items }
        if let session { kept = kept.filter { $0.session == session } }
        if let limit, kept.count > limit { kept.removeFirst(kept.count - max(0, limit)) }
        return kept
    }

    /// Forgets every request, or one session's.
    func clear(session: String? = nil) {
        items.withLock { items in
            if let session { items.keepOnly { $0.session != session } } else { items.keepOnly { _ in false } }
        }
    }
}
