import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One test's view of a shared server: its requests carry the session header, so its cycles,
/// journal entries and Retry-After checks are its own, even with other tests running at once.
public struct MishapSession: Sendable, Hashable {
    public let id: String
    public let headerName: String

    /// The header to add to every request of this test.
    public var headers: [String: String] { [headerName: id] }

    /// A fresh ephemeral configuration that adds the session header to every request.
    public var configuration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpAdditionalHeaders = headers
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 30
        return configuration
    }

    /// Adds the session header to a request.
    public func apply(to request: inout URLRequest) {
        request.setValue(id, forHTTPHeaderField: headerName)
    }
}
