/// Told about every request when the server is done with it (for request logs).
public protocol RequestObserver: Sendable {
    func completed(_ request: CompletedRequest)
}
