import Foundation

/// Polls `condition` every `interval` until it holds; false when `timeout` passes first.
public func eventually(within timeout: Duration = .seconds(2), every interval: Duration = .milliseconds(10),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
}

/// Runs blocking work (sockets, `stop(grace:)`) on a thread of its own, so a test waiting
/// seconds on `recv` does not hold one of the few threads of Swift's cooperative pool that the
/// other tests run on.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.stackSize = 1 << 20
        thread.start()
    }
}

/// Hands a non-Sendable value (a blocking connection used by one thread at a time) across.
public struct SendableBox<Value>: @unchecked Sendable {
    public let value: Value
    public init(_ value: Value) { self.value = value }
}
