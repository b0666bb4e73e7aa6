/// Sends HTTP requests and answers each later: what a demand source needs of HTTP, so that it
/// can be tested with a fake (``CurlHTTPClient`` is the real one, on the event loop).
///
/// - Important: loop-confined. `completion` is called exactly once, on the caller's thread,
///   never from inside ``send(_:completion:)``.
public protocol HTTPClient: AnyObject {
    /// Sends `request` (or queues it behind the client's concurrency cap).
    func send(_ request: HTTPRequest, completion: @escaping (Result<HTTPResponse, HTTPError>) -> Void)
}
