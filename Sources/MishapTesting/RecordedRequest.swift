import Foundation
import MishapService

/// A request as the server received it.
public struct RecordedRequest: Sendable {
    public let id: UInt64
    /// When it arrived.
    public let date: Date
    public let method: String
    public let path: String
    /// Query parameters in order, decoded.
    public let query: [(name: String, value: String)]
    public let headers: [(name: String, value: String)]
    public let body: Data
    public let session: String?
    /// `GET /login`; nil when no endpoint matched.
    public let endpoint: String?
    public let rule: String?
    /// The status sent; nil for a fault or a hang.
    public let status: Int?
    /// The fault carried out instead of an answer (`reset`, `close`, ...).
    public let fault: String?

    init(_ entry: JournalEntry) {
        id = entry.id
        date = Date(timeIntervalSince1970: Double(entry.time) / 1000)
        method = entry.method
        path = entry.path
        query = entry.query.map { ($0.name, $0.value) }
        headers = entry.headers.map { ($0.name, $0.value) }
        body = Data(entry.body)
        session = entry.session
        endpoint = entry.endpoint
        rule = entry.rule
        status = entry.status
        fault = entry.fault?.rawValue
    }

    /// The first query parameter with this name.
    public func queryValue(_ name: String) -> String? { query.first { $0.name == name }?.value }
    /// The first header with this name, compared without regard to case.
    public func header(_ name: String) -> String? { headers.first { $0.name.lowercased() == name.lowercased() }?.value }
}
