/// `GET /__mishap/health`: succeeds when the server at `url` answers 200. For container health
/// checks and readiness waits, where no HTTP client may be installed.
func healthCheck(url: String, token: String? = nil, timeoutMilliseconds: Int32 = 3000) -> Result<Void, AdminCallFailure> {
    switch adminCall(url: url, token: token, target: "/__mishap/health", timeoutMilliseconds: timeoutMilliseconds) {
    case .success((200, _)): return .success(())
    case .success((let status, _)): return .failure(AdminCallFailure("\(url)/__mishap/health answered \(status)"))
    case .failure(let failure): return .failure(failure)
    }
}
