/// Port 8080, where `mishap status`, `state` and `force` look when no pid file names a server.
/// A test that serves there holds it for its whole run; a test that asks `status` and expects
/// nothing to be serving there holds it for that call, so tests running side by side in one
/// process never see each other's server.
public actor DefaultPortLock {
    public static let shared = DefaultPortLock()

    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` while no other test holds the port.
    public static func exclusive<T: Sendable>(_ body: @Sendable () async throws -> T) async rethrows -> T {
        await shared.acquire()
        do {
            let result = try await body()
            await shared.release()
            return result
        } catch {
            await shared.release()
            throw error
        }
    }

    private func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            held = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
