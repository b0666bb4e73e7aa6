import AdLoaderAdmin
import AdLoaderMetrics
import AdLoaderOperations
import AdLoaderService

/// What the admin listener serves (GET only; ``AdminServer`` refuses other methods):
///
/// - `/metrics`: every metric, Prometheus text format or OpenMetrics by `Accept`;
/// - `/healthz`: 200 while the process serves HTTP at all (liveness);
/// - `/readyz`: 200 when listening, not draining and some demand source reachable, else 503
///   with the reasons (readiness: take the instance out of the load balancer);
/// - `/`: the dashboard page, and `/dashboard.json`, its data.
///
/// When the admin listener is bound beyond loopback (``requiresToken``), every request but
/// `/healthz` and `/readyz` (probes) needs `Authorization: Bearer <token>` with one of the
/// daemon's tokens (the current ones: a reload that removes a token takes effect here too).
///
/// - Important: loop-confined.
final class AdminRoutes {
    private let metrics: DaemonMetrics
    private let history: DashboardHistory
    /// Now, in Unix milliseconds (the dashboard's uptime).
    private let now: () -> Int64
    /// The tokens requests must carry; nil: none needed (a loopback admin listener).
    private let authenticator: (() -> CallAuthenticator)?

    init(
        metrics: DaemonMetrics, history: DashboardHistory, authenticator: (() -> CallAuthenticator)? = nil,
        now: @escaping () -> Int64
    ) {
        self.metrics = metrics
        self.history = history
        self.authenticator = authenticator
        self.now = now
    }

    func respond(to request: HTTPRequestHead) -> HTTPResponse {
        if let authenticator, request.path != "/healthz", request.path != "/readyz",
            let refusal = authenticator().check(request.header("Authorization"), peerIsLocal: false)
        {
            return HTTPResponse(
                status: .unauthorized, body: Array("\(refusal.message)\n".utf8),
                headers: [.init(name: "WWW-Authenticate", value: "Bearer")])
        }
        switch request.path {
        case "/metrics":
            let format = ExpositionFormat.negotiate(accept: request.header("Accept"))
            return HTTPResponse(contentType: format.contentType, text: format.render(metrics.families()))
        case "/healthz":
            return HTTPResponse(text: "ok\n")
        case "/readyz":
            let readiness = metrics.readiness
            if readiness.ready { return HTTPResponse(text: "ready\n") }
            return HTTPResponse(
                status: .serviceUnavailable, text: "not ready: " + readiness.reasons.joined(separator: "; ") + "\n")
        case "/", "/dashboard":
            return HTTPResponse(contentType: "text/html; charset=utf-8", text: DashboardPage.html)
        case "/dashboard.json":
            return HTTPResponse(
                contentType: "application/json", text: history.json(ready: metrics.readiness, unixMilliseconds: now()))
        default:
            return HTTPResponse(
                status: .notFound, text: "not found; try /metrics, /healthz, /readyz or / (dashboard)\n")
        }
    }
}
